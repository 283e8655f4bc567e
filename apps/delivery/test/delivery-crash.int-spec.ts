import type { DeliveryView } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import {
  attemptsOfAll,
  type DeliveryTestApp,
  isDelivered,
  newSender,
  publishChunkJob,
  publishJob,
  recipientDomain,
  registerMessage,
  startDeliveryTestApp,
  type TestSender,
  unique,
  waitForEveryJobAcknowledged,
} from './delivery-test-app';
import type { ChildHandle } from './isolated-platform';

/** The sink answers each message this long after its final dot: the RFC 1047 window. */
const SLOW_MS = 800;
const BATCH = 12;
/**
 * Compressed time for the worker processes: a job unacknowledged for 1 s goes back to the queue;
 * an attempt's claim ends 2 s after its worker last renewed it; an attempt lasts at most 2 s;
 * retries after 400 then 800 ms.
 */
const WORKER_ENV = {
  DELIVERY_ACK_WAIT_MS: '1000',
  DELIVERY_CLAIM_TTL_MS: '2000',
  SMTP_ATTEMPT_TIMEOUT_MS: '2000',
  SMTP_MAX_CONNECTIONS_PER_HOST: String(BATCH * 2),
  DELIVERY_CONCURRENCY: String(BATCH * 4),
  SHUTDOWN_GRACE_MS: '1000',
};
const TAKEOVER_REPLY = /may have been received \(RFC 1047\)/;

/**
 * S2: the delivery service runs as a process from dist/ (as in production) and is killed with
 * SIGKILL, by its PID, while SMTP sessions are in flight, then started again: once by the sink's
 * final-dot hook (the kill lands exactly in the RFC 1047 window), once at a random phase. Nothing
 * may be lost, and a message may arrive twice only when its data had been fully sent before the
 * kill. The first batch comes as one chunk job (a send's), the second as one job per message.
 */
describe('delivery service: a worker killed mid-send (S2)', () => {
  let app: DeliveryTestApp | undefined;
  let sender: TestSender;
  let worker: ChildHandle | undefined;

  beforeAll(async () => {
    app = await startDeliveryTestApp();
    sender = await newSender(app);
    // From here on only the worker processes this test starts take jobs.
    await app.service.close();
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
  }, 60_000);

  it('loses nothing; duplicates only for messages whose data was sent before the kill', async () => {
    if (!app) throw new Error('the delivery service did not start');
    const test = app;
    const domain = recipientDomain(test);
    const batch = (): DeliveryView[] =>
      Array.from({ length: BATCH }, () =>
        registerMessage(test, sender, [`slow${SLOW_MS}-${unique('k')}@${domain}`]),
      );
    const recipientOf = (view: DeliveryView) => view.envelope_recipients[0] ?? '';

    // When each final dot reached the sink, by recipient, and what a kill should do on one.
    const dots = new Map<string, number[]>();
    let onDot: ((recipient: string) => void) | undefined;
    test.sink.onFinalDot((rcptTo) => {
      const recipient = rcptTo[0] ?? '';
      dots.set(recipient, [...(dots.get(recipient) ?? []), Date.now()]);
      onDot?.(recipient);
    });
    const kills: string[] = [];

    // Kill 1: at the 4th final dot of the first batch, before the sink answers it.
    worker = await test.startChildService(WORKER_ENV);
    const first = batch();
    const firstRecipients = new Set(first.map(recipientOf));
    let firstDots = 0;
    const current = worker;
    onDot = (recipient) => {
      if (!firstRecipients.has(recipient) || ++firstDots !== 4) return;
      onDot = undefined;
      kills.push('at final dot #4');
      void current.kill();
    };
    // The first batch as accept queues a send's messages: one chunk job.
    await publishChunkJob(test, first);
    await pollUntil(
      () => kills.length,
      (count) => count === 1,
      { what: 'the kill at the final dot', timeoutMs: 15_000 },
    );
    await worker.kill();
    expect(worker.child.signalCode).toBe('SIGKILL');

    // Kill 2: a random phase (0–600 ms) after the restarted worker opened its first session.
    worker = await test.startChildService(WORKER_ENV);
    const second = batch();
    const connections = test.sink.connections;
    for (const view of second) await publishJob(test, view);
    await pollUntil(
      () => test.sink.connections,
      (count) => count > connections,
      { what: 'a session of the second batch', timeoutMs: 15_000 },
    );
    const phaseMs = Math.floor(Math.random() * 600);
    await new Promise((resolve) => setTimeout(resolve, phaseMs));
    const openSessions = await test.sink.openConnections();
    kills.push(`at a random phase (${phaseMs} ms)`);
    await worker.kill();
    expect(openSessions).toBeGreaterThan(0);

    // The last start: it takes over the abandoned attempts once their leases end.
    worker = await test.startChildService(WORKER_ENV);
    const views = [...first, ...second];
    await pollUntil(
      () => views.filter((view) => test.events.of(view.id).some(isDelivered)).length,
      (delivered) => delivered === views.length,
      { what: 'every message delivered', timeoutMs: 40_000 },
    );

    // Lost: none. Every message has exactly one Delivered outcome, after nothing but deferrals.
    for (const view of views) {
      const types = test.events.of(view.id).map((event) => event.type);
      expect(types.at(-1)).toBe('message.delivered');
      expect(types.slice(0, -1).every((type) => type === 'message.transient_error')).toBe(true);
      expect(test.sink.receiptsFor(recipientOf(view)).length).toBeGreaterThanOrEqual(1);
    }
    const attempts = await attemptsOfAll(
      test,
      views.map((view) => view.id),
    );
    // Nothing stuck in progress after the lease.
    expect(attempts.filter((attempt) => attempt.state !== 'done')).toEqual([]);
    // Every attempt a kill interrupted was recorded as a deferral and retried.
    const interrupted = attempts.filter((attempt) => TAKEOVER_REPLY.test(attempt.reply));
    for (const attempt of interrupted) expect(attempt.status).toBe('Deferred');
    expect(interrupted.length).toBeGreaterThan(0);

    // Ambiguous (F_amb): an interrupted attempt whose final dot had reached the sink, i.e. before
    // the next attempt started (a killed worker sends nothing more; its last bytes may land just
    // after the kill). Only those messages may be duplicated.
    const ambiguous = interrupted.filter((attempt) => {
      const view = views.find((candidate) => candidate.id === attempt.message_id);
      const next = attempts.find(
        (row) => row.message_id === attempt.message_id && row.attempt === attempt.attempt + 1,
      );
      const before = next ? next.started_at.getTime() : Infinity;
      return (dots.get(view ? recipientOf(view) : '') ?? []).some((at) => at < before);
    });
    const ambiguousIds = new Set(ambiguous.map((attempt) => attempt.message_id));
    const duplicated = views.filter((view) => test.sink.receiptsFor(recipientOf(view)).length > 1);
    const duplicates = duplicated.reduce(
      (sum, view) => sum + test.sink.receiptsFor(recipientOf(view)).length - 1,
      0,
    );
    expect(duplicated.filter((view) => !ambiguousIds.has(view.id))).toEqual([]);
    expect(duplicates).toBeLessThanOrEqual(ambiguous.length);

    await waitForEveryJobAcknowledged(test, 10_000);

    const perKill = [first, second].map(
      (views) =>
        `${ambiguous.filter((attempt) => views.some((view) => view.id === attempt.message_id)).length}`,
    );
    const received = views.filter((view) => test.sink.receiptsFor(recipientOf(view)).length > 0);
    console.log(
      `S2: accepted ${views.length}, delivered ${received.length} unique, ` +
        `lost ${views.length - received.length}, ` +
        `dup ${duplicates} (F_amb ${ambiguous.length} = ${perKill.join(' + ')}, ` +
        `${kills.length} kills: ${kills.join(', ')}), ` +
        `interrupted attempts ${interrupted.length}, ` +
        `max attempts ${Math.max(...attempts.map((attempt) => attempt.attempt))}`,
    );
  }, 60_000);
});
