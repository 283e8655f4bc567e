import { randomUUID } from 'node:crypto';

import { EVENTS_STREAM, type StreamSubject } from '@envoi/contracts-core';
import { type DeliveryOutcomeEvent, DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { pollUntil } from '@envoi/shared-testing';

import { SUPPRESSING_EVENT_DURABLES } from '../src/suppressions/delivery-events.controller';
import {
  newAccountId,
  startSuppressionsService,
  type SuppressionsTestApp,
  uniqueDomain,
  uniqueEmail,
} from './suppressions-test-app';

/** The mix of a busy platform: mostly deliveries, some deferrals, a few hard bounces. */
const EVENTS = Number(process.env['SUPPRESSIONS_BENCH_EVENTS'] ?? 10_000);
const BOUNCE_EVERY = 20;
const DEFERRAL_EVERY = 10;
const PUBLISH_CHUNK = 500;

type OutcomeType = 'message.delivered' | 'message.transient_error' | 'message.bounced';

/** What each kind of outcome carries. */
const OUTCOMES = {
  'message.delivered': {
    subject: DeliveryStreamSubjects.delivered,
    event: 'on_delivered',
    status: 'Delivered',
    result: 'delivered',
    reply: '250 2.0.0 ok',
  },
  'message.transient_error': {
    subject: DeliveryStreamSubjects.transientError,
    event: 'on_transient_error',
    status: 'Deferred',
    result: 'transient_error',
    reply: '451 4.4.1 try later',
  },
  'message.bounced': {
    subject: DeliveryStreamSubjects.bounced,
    event: 'on_bounced',
    status: 'Bounced',
    result: 'bounced',
    reply: '550 5.1.1 no such user',
  },
} as const satisfies Record<OutcomeType, unknown>;

function outcomeEvent(
  type: OutcomeType,
  accountId: string,
  domain: string,
  email: string,
): DeliveryOutcomeEvent {
  const { event, status, result, reply } = OUTCOMES[type];
  const time = new Date().toISOString();
  const bounce = type === 'message.bounced' ? { bounce_classification: 'hard' as const } : {};
  const messageId = randomUUID();
  return {
    id: randomUUID(),
    type,
    timestamp: time,
    data: {
      account_id: accountId,
      event,
      from: `hello@${domain}`,
      recipient: email,
      subject: 'Hello',
      message_id_header: `<${messageId}@${domain}>`,
      id: messageId,
      is_bot: false,
      status,
      attempt: { time, remote_host: 'mx.example.test', reply, status, attempt: 1 },
      ...bounce,
      sandbox: false,
      recipients: [{ email, result, remote_host: 'mx.example.test', reply, ...bounce }],
    },
  };
}

function typeOf(index: number): OutcomeType {
  if (index % BOUNCE_EVERY === 0) return 'message.bounced';
  if (index % DEFERRAL_EVERY === 0) return 'message.transient_error';
  return 'message.delivered';
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

/**
 * What the delivery events cost this service: publishes EVENTS delivery outcomes (one bounce in
 * BOUNCE_EVERY) and reports the CPU of this process (the service runs in it) per event, less
 * the CPU of publishing as many events nobody here consumes. A measure, not a timed assertion;
 * it checks that every bounce was suppressed once.
 */
describe('suppressions service: delivery events throughput', () => {
  let app: SuppressionsTestApp | undefined;

  beforeAll(async () => {
    app = await startSuppressionsService();
  });

  afterAll(async () => {
    await app?.close();
  });

  async function publishAll(
    service: SuppressionsTestApp,
    events: ReadonlyArray<{ subject: StreamSubject<unknown>; event: DeliveryOutcomeEvent }>,
  ): Promise<Map<string, number>> {
    const js = service.connection.jetstream();
    const lastSeq = new Map<string, number>();
    for (let start = 0; start < events.length; start += PUBLISH_CHUNK) {
      const chunk = events.slice(start, start + PUBLISH_CHUNK);
      const acks = await Promise.all(
        chunk.map(({ subject, event }) =>
          js.publish(subject.name, Buffer.from(JSON.stringify(event)), { msgID: event.id }),
        ),
      );
      chunk.forEach(({ subject }, index) =>
        lastSeq.set(subject.name, Math.max(lastSeq.get(subject.name) ?? 0, acks[index]?.seq ?? 0)),
      );
    }
    return lastSeq;
  }

  it(`handles ${EVENTS} delivery events; reports the CPU per event`, async () => {
    if (!app) throw new Error('the suppressions service did not start');
    const service = app;
    const accountId = newAccountId();
    const domain = uniqueDomain();
    const events = Array.from({ length: EVENTS }, (_, index) => {
      const type = typeOf(index);
      return {
        subject: OUTCOMES[type].subject,
        event: outcomeEvent(type, accountId, domain, uniqueEmail()),
      };
    });
    const unconsumed = events.map(({ event }) => ({
      subject: DeliveryStreamSubjects.suppressed,
      event: { ...event, id: randomUUID() },
    }));

    const publishStart = process.cpuUsage();
    await publishAll(service, unconsumed);
    const publishOnlyMs = cpuMs(publishStart);

    const start = process.cpuUsage();
    const startedAt = Date.now();
    const lastSeq = await publishAll(service, events);
    const jsm = await service.connection.jetstreamManager();
    for (const [durable, subject] of SUPPRESSING_EVENT_DURABLES) {
      const seq = lastSeq.get(subject.name);
      if (seq === undefined) continue;
      await pollUntil(
        () => jsm.consumers.info(EVENTS_STREAM, durable),
        (info) => info.ack_floor.stream_seq >= seq && info.num_ack_pending === 0,
        { what: `${durable} to acknowledge #${seq}`, timeoutMs: 120_000, intervalMs: 100 },
      );
    }
    const totalMs = cpuMs(start);
    const elapsedMs = Date.now() - startedAt;

    const bounces = events.filter(({ event }) => event.type === 'message.bounced').length;
    const [row] = await service.dataSource.query<Array<{ count: number }>>(
      'SELECT count(*)::int AS count FROM suppressions.suppressions WHERE account_id = $1',
      [accountId],
    );
    expect(row?.count).toBe(bounces);
    const consumerMs = totalMs - publishOnlyMs;
    process.stdout.write(
      `suppressions delivery events: ${EVENTS} events (${bounces} hard bounces) in ${elapsedMs} ms; ` +
        `CPU ${totalMs.toFixed(0)} ms, publishing alone ${publishOnlyMs.toFixed(0)} ms: ` +
        `${(consumerMs / EVENTS).toFixed(3)} ms of CPU per event consumed\n`,
    );
  }, 300_000);
});
