import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { EVENTS_STREAM } from '@envoi/contracts-core';
import type { DeliveryView } from '@envoi/contracts-messages';
import {
  type BounceMailEvent,
  type FeedbackMailEvent,
  INBOUND_SPOOL_BUCKET,
  type InboundEnvelope,
  InboundStreamSubjects,
} from '@envoi/contracts-routes';
import { type SuppressionRecord, SuppressionsSubjects } from '@envoi/contracts-suppressions';
import { putUpload } from '@envoi/shared-nats';
import { pollUntil } from '@envoi/shared-testing';

import { InboundPurgeService } from '../src/inbound-bounces/inbound-purge.service';
import {
  type DeliveryTestApp,
  newSender,
  registerMessage,
  startDeliveryTestApp,
  type TestSender,
} from './delivery-test-app';

const CORPUS = path.join(__dirname, '../src/inbound-bounces/corpus');
/** The message uuid and recipient the corpus samples name, replaced by each test's own. */
const CORPUS_UUID = '0190a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b';
const BOUNCE_HOST = 'bounces.envoi.test';
const FEEDBACK_ADDRESS = 'fbl@feedback.envoi.test';
const SPOOL_TTL_MS = 3_600_000;

jest.setTimeout(180_000);

/** A corpus sample about `view` and its recipient (the sample's own replaced). */
function sample(name: string, sampleRecipient: string, view: DeliveryView): Buffer {
  const text = readFileSync(path.join(CORPUS, `${name}.eml`), 'utf8')
    .split(CORPUS_UUID)
    .join(view.id)
    .split(sampleRecipient)
    .join(view.envelope_recipients[0] ?? '');
  return Buffer.from(text);
}

function verp(view: DeliveryView): string {
  return `bounce+${view.id}@${BOUNCE_HOST}`;
}

describe('asynchronous bounces and complaints (real NATS, PostgreSQL, suppressions service)', () => {
  let app: DeliveryTestApp;
  let sender: TestSender;

  beforeAll(async () => {
    app = await startDeliveryTestApp();
    await app.platform.startService(
      'suppressions',
      app.platform.env({ OUTBOX_RELAY_INTERVAL_MS: '100' }),
    );
    sender = await newSender(app);
  }, 240_000);

  afterAll(async () => {
    await app?.close();
  });

  /** Spools the bytes as the MX does and describes the received mail. */
  async function spool(bytes: Buffer): Promise<InboundEnvelope> {
    const inboundId = randomUUID();
    const ref = await putUpload(
      app.connection,
      INBOUND_SPOOL_BUCKET,
      inboundId,
      bytes,
      SPOOL_TTL_MS,
    );
    expect(ref.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    return {
      inbound_id: inboundId,
      received_at: new Date().toISOString(),
      remote_address: '127.0.0.1',
      helo: 'mx.remote.test',
      tls: false,
      envelope_from: '',
      size: bytes.length,
      spool: ref,
    };
  }

  async function publish(
    subject: string,
    event: BounceMailEvent | FeedbackMailEvent,
  ): Promise<void> {
    // A fresh Nats-Msg-Id each time: a repeat is handled by the consumer, not hidden by the stream.
    await app.connection
      .jetstream()
      .publish(subject, new TextEncoder().encode(JSON.stringify(event)), { msgID: randomUUID() });
  }

  async function publishBounce(envelope: InboundEnvelope, view: DeliveryView): Promise<void> {
    await publish(InboundStreamSubjects.bounce.name, {
      id: randomUUID(),
      type: 'inbound.bounce',
      timestamp: new Date().toISOString(),
      data: { ...envelope, recipients: [{ address: verp(view), message_uuid: view.id }] },
    });
  }

  async function publishFeedback(envelope: InboundEnvelope): Promise<void> {
    await publish(InboundStreamSubjects.feedback.name, {
      id: randomUUID(),
      type: 'inbound.feedback',
      timestamp: new Date().toISOString(),
      data: { ...envelope, recipient: FEEDBACK_ADDRESS },
    });
  }

  async function suppressions(email: string): Promise<SuppressionRecord[]> {
    const page = await app.rpc.request(SuppressionsSubjects.list, {
      account_id: sender.accountId,
      page: { limit: 100 },
    });
    return page.data.filter((suppression) => suppression.email === email);
  }

  function waitForSuppression(email: string): Promise<SuppressionRecord[]> {
    return pollUntil(
      () => suppressions(email),
      (found) => found.length > 0,
      { timeoutMs: 20_000, what: `a suppression of ${email}` },
    );
  }

  /** Every MX event the durable was given has been acknowledged. */
  async function consumed(durable: string): Promise<void> {
    const jsm = await app.connection.jetstreamManager();
    await pollUntil(
      () => jsm.consumers.info(EVENTS_STREAM, durable),
      (info) => info.num_pending === 0 && info.num_ack_pending === 0,
      { timeoutMs: 20_000, what: `${durable} to acknowledge everything` },
    );
  }

  function delivered(recipient: string): DeliveryView {
    return registerMessage(app, sender, [recipient], { status: 'Delivered' });
  }

  async function attempts(messageId: string) {
    const { rows } = await app.db.query<{ attempt: number; outcome: string; bounced_to: string[] }>(
      'SELECT attempt, outcome, bounced_to FROM delivery.attempts WHERE message_id = $1',
      [messageId],
    );
    return rows;
  }

  it('a hard DSN after delivery: message.bounced (Bounced, hard), an attempt, a suppression', async () => {
    const view = delivered('gone@hard.example.test');
    await publishBounce(
      await spool(sample('postfix-user-unknown', 'jane@example.org', view)),
      view,
    );

    const [event] = await app.events.waitFor(view.id, 1);
    expect(event).toMatchObject({
      type: 'message.bounced',
      data: {
        id: view.id,
        status: 'Bounced',
        bounce_classification: 'hard',
        attempt: { attempt: 1, remote_host: 'mx1.example.org', status: 'Bounced' },
        recipients: [
          { email: 'gone@hard.example.test', result: 'bounced', bounce_classification: 'hard' },
        ],
      },
    });
    expect(event?.data.attempt.reply).toContain('550 5.1.1');
    expect(await attempts(view.id)).toEqual([
      { attempt: 1, outcome: 'bounced', bounced_to: ['gone@hard.example.test'] },
    ]);
    const [suppression] = await waitForSuppression('gone@hard.example.test');
    expect(suppression?.domain).toBe(sender.domain.domain);
    expect(suppression?.reason).toContain('Hard bounce');
  });

  it('a soft DSN: message.bounced (soft), no suppression', async () => {
    const soft = delivered('full@soft.example.test');
    await publishBounce(await spool(sample('postfix-mailbox-full', 'bob@example.org', soft)), soft);
    const [event] = await app.events.waitFor(soft.id, 1);
    expect(event).toMatchObject({
      type: 'message.bounced',
      data: { status: 'Bounced', bounce_classification: 'soft' },
    });
    // A hard bounce after it goes through the same suppressions consumer: once it is suppressed,
    // the soft one was handled too.
    const hard = delivered('gone-after-soft@hard.example.test');
    await publishBounce(await spool(sample('qmail-no-mailbox', 'zoe@example.com', hard)), hard);
    await waitForSuppression('gone-after-soft@hard.example.test');
    expect(await suppressions('full@soft.example.test')).toEqual([]);
  });

  it('an ARF complaint to the feedback address: a suppression with reason complaint', async () => {
    const view = delivered('olga@complaint.example.test');
    await publishFeedback(await spool(sample('arf-rfc5965-example', 'olga@example.net', view)));
    const [suppression] = await waitForSuppression('olga@complaint.example.test');
    expect(suppression).toMatchObject({ reason: 'complaint', domain: sender.domain.domain });
    // Its event is the complaint alone: no delivery event, the message's status stays.
    expect(app.events.of(view.id).map((event) => event.type)).toEqual(['message.complaint']);
  });

  it('garbage and mail about no message are kept unmatched; the consumer goes on', async () => {
    const unknown = delivered('nobody@unknown.example.test');
    app.views.views.delete(unknown.id);
    const garbage = await spool(Buffer.from('\u0000\u00ff not mail at all \r\n\r\n'));
    const unmatched = await spool(sample('postfix-user-unknown', 'jane@example.org', unknown));
    const missingSpool = {
      ...(await spool(Buffer.from('x'))),
      spool: {
        bucket: INBOUND_SPOOL_BUCKET,
        name: 'never-written',
        size: 1,
        sha256: '0'.repeat(64),
      },
    };
    await publishBounce(garbage, unknown);
    await publishBounce(unmatched, unknown);
    await publishBounce(missingSpool, unknown);
    await publishFeedback(garbage);

    const after = delivered('after-garbage@hard.example.test');
    await publishBounce(
      await spool(sample('exim-user-unknown', 'victor@example.com', after)),
      after,
    );
    await app.events.waitFor(after.id, 1);

    const { rows } = await app.db.query<{
      inbound_id: string;
      kind: string;
      reason: string;
      content: Buffer | null;
    }>(
      `SELECT inbound_id, kind, reason, content FROM delivery.inbound_unmatched
        WHERE inbound_id = ANY($1::uuid[]) ORDER BY reason`,
      [[garbage.inbound_id, unmatched.inbound_id, missingSpool.inbound_id]],
    );
    const reasons = new Map(rows.map((row) => [`${row.inbound_id}/${row.kind}`, row.reason]));
    expect(reasons.get(`${garbage.inbound_id}/bounce`)).toContain('not a bounce');
    expect(reasons.get(`${garbage.inbound_id}/feedback`)).toContain('not a complaint');
    expect(reasons.get(`${unmatched.inbound_id}/bounce`)).toBe(`message ${unknown.id} not found`);
    expect(reasons.get(`${missingSpool.inbound_id}/bounce`)).toContain('missing');
    expect(rows).toHaveLength(4);
    expect(rows.find((row) => row.inbound_id === garbage.inbound_id)?.content?.length).toBe(
      garbage.size,
    );
    expect(rows.find((row) => row.inbound_id === missingSpool.inbound_id)?.content).toBeNull();
    expect(app.events.of(unknown.id)).toEqual([]);
  });

  it('a delay warning records nothing; a bounce naming another recipient is kept unmatched', async () => {
    const delayed = delivered('slow@delay.example.test');
    const delay = await spool(sample('postfix-delayed', 'carol@example.net', delayed));
    const other = delivered('someone@mismatch.example.test');
    // The DSN names its sample's recipient, not the message's.
    const mismatch = await spool(
      Buffer.from(
        readFileSync(path.join(CORPUS, 'postfix-user-unknown.eml'), 'utf8')
          .split(CORPUS_UUID)
          .join(other.id),
      ),
    );
    await publishBounce(delay, delayed);
    await publishBounce(mismatch, other);
    await consumed('delivery-inbound-bounce');

    expect(app.events.of(delayed.id)).toEqual([]);
    expect(app.events.of(other.id)).toEqual([]);
    expect(await attempts(delayed.id)).toEqual([]);
    const { rows } = await app.db.query<{ inbound_id: string; reason: string }>(
      'SELECT inbound_id, reason FROM delivery.inbound_unmatched WHERE inbound_id = ANY($1::uuid[])',
      [[delay.inbound_id, mismatch.inbound_id]],
    );
    expect(rows).toEqual([
      {
        inbound_id: mismatch.inbound_id,
        reason: `the bounce names jane@example.org, not a recipient of message ${other.id}`,
      },
    ]);
  });

  it('the purge deletes unmatched mail and report records past their retention only', async () => {
    const old = await spool(Buffer.from('old garbage'));
    const recent = await spool(Buffer.from('recent garbage'));
    const nobody = delivered('nobody@purge.example.test');
    await publishBounce(old, nobody);
    await publishBounce(recent, nobody);
    await consumed('delivery-inbound-bounce');
    await app.db.query(
      `UPDATE delivery.inbound_unmatched SET stored_at = now() - interval '31 days'
        WHERE inbound_id = $1`,
      [old.inbound_id],
    );
    const applied = await app.db.query<{ inbound_id: string }>(
      `UPDATE delivery.inbound_reports SET handled_at = now() - interval '9 days'
        WHERE inbound_id = (SELECT inbound_id FROM delivery.inbound_reports LIMIT 1)
        RETURNING inbound_id`,
    );
    expect(applied.rows).toHaveLength(1);

    await app.service.app.get(InboundPurgeService).purge();

    const kept = await app.db.query<{ inbound_id: string }>(
      'SELECT inbound_id FROM delivery.inbound_unmatched WHERE inbound_id = ANY($1::uuid[])',
      [[old.inbound_id, recent.inbound_id]],
    );
    expect(kept.rows).toEqual([{ inbound_id: recent.inbound_id }]);
    const records = await app.db.query(
      'SELECT 1 FROM delivery.inbound_reports WHERE inbound_id = $1',
      [applied.rows[0]?.inbound_id],
    );
    expect(records.rows).toEqual([]);
    const { rows } = await app.db.query<{ count: string }>(
      'SELECT count(*) FROM delivery.inbound_reports',
    );
    expect(Number(rows[0]?.count)).toBeGreaterThan(0);
  });

  it('the same bounce event twice is applied once', async () => {
    const view = delivered('twice@hard.example.test');
    const envelope = await spool(sample('gmail-user-unknown', 'frank.nobody@gmail.com', view));
    await publishBounce(envelope, view);
    await publishBounce(envelope, view);
    await app.events.waitFor(view.id, 1);
    await consumed('delivery-inbound-bounce');
    expect(await attempts(view.id)).toHaveLength(1);
    const { rows } = await app.db.query<{ count: string }>(
      `SELECT count(*) FROM delivery.outbox
        WHERE subject = 'events.message.bounced.v1' AND payload->'data'->>'id' = $1`,
      [view.id],
    );
    expect(rows[0]?.count).toBe('1');
    expect(app.events.of(view.id)).toHaveLength(1);
  });
});
