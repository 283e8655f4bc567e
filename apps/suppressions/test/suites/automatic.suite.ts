import { randomUUID } from 'node:crypto';

import { EVENTS_STREAM, type StreamSubject } from '@envoi/contracts-core';
import {
  type BounceClassification,
  ComplaintStreamSubjects,
  type DeliveryOutcomeBatchEvent,
  DeliveryStreamSubjects,
  type MessageBouncedEvent,
  type MessageComplaintEvent,
  type MessageDeliveredEvent,
  type MessageFailedEvent,
} from '@envoi/contracts-delivery';
import type { MessageStatus } from '@envoi/contracts-messages';
import {
  type SuppressionCreatedEvent,
  SuppressionsStreamSubjects,
  SuppressionsSubjects,
} from '@envoi/contracts-suppressions';
import { subscribeBroadcast } from '@envoi/shared-nats';
import { pollUntil } from '@envoi/shared-testing';

import { SUPPRESSING_EVENT_DURABLES } from '../../src/suppressions/delivery-events.controller';
import { ExpiredPurgeService } from '../../src/suppressions/expired-purge.service';
import {
  createSuppression,
  expire,
  newAccountId,
  storedRows,
  streamMessages,
  type SuppressionsTestApp,
  uniqueDomain,
  uniqueEmail,
} from '../suppressions-test-app';

type SuppressingEvent = MessageBouncedEvent | MessageFailedEvent;
type OutcomeEvent = SuppressingEvent | MessageDeliveredEvent;

interface Delivery {
  accountId: string;
  domain: string;
  recipient: string;
}

function newDelivery(): Delivery {
  return { accountId: newAccountId(), domain: uniqueDomain(), recipient: uniqueEmail() };
}

/** A bounce or failure as the delivery service publishes it (DeliveryOutcomeData). */
function outcome(
  delivery: Delivery,
  type: SuppressingEvent['type'],
  status: MessageStatus,
  options: { bounce?: BounceClassification; sandbox?: boolean; attempt?: number } = {},
): SuppressingEvent {
  const id = randomUUID();
  const time = new Date().toISOString();
  const reply = type === 'message.bounced' ? '550 5.1.1 no such user' : '451 4.4.1 timed out';
  return {
    id: randomUUID(),
    type,
    timestamp: time,
    data: {
      account_id: delivery.accountId,
      event: type === 'message.bounced' ? 'on_bounced' : 'on_failed',
      from: `hello@${delivery.domain}`,
      recipient: delivery.recipient,
      subject: 'Hello',
      message_id_header: `<${id}@${delivery.domain}>`,
      id,
      is_bot: false,
      status,
      attempt: {
        time,
        remote_host: 'mx.example.test',
        reply,
        status,
        attempt: options.attempt ?? 3,
      },
      ...(options.bounce ? { bounce_classification: options.bounce } : {}),
      sandbox: options.sandbox ?? false,
      recipients: [
        {
          email: delivery.recipient,
          result: type === 'message.bounced' ? 'bounced' : 'failed',
          remote_host: 'mx.example.test',
          reply,
          ...(options.bounce ? { bounce_classification: options.bounce } : {}),
        },
      ],
      ...(type === 'message.failed' && status === 'Failed'
        ? { failure_reason: (options.attempt ?? 3) >= 2 ? 'retries_exhausted' : 'not_sendable' }
        : type === 'message.failed'
          ? { failure_reason: 'expired' }
          : {}),
    },
  };
}

export function automaticSuite(getApp: () => SuppressionsTestApp): void {
  describe('suppressions service: automatic suppressions from delivery events', () => {
    let app: SuppressionsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    function subjectOf(event: OutcomeEvent): StreamSubject<unknown> {
      if (event.type === 'message.bounced') return DeliveryStreamSubjects.bounced;
      if (event.type === 'message.failed') return DeliveryStreamSubjects.failed;
      return DeliveryStreamSubjects.delivered;
    }

    /** Waits until this service's consumer of the subject has acknowledged up to `seq`. */
    async function acknowledged(subject: StreamSubject<unknown>, seq: number): Promise<void> {
      const durable = SUPPRESSING_EVENT_DURABLES.find(
        ([, candidate]) => candidate === subject,
      )?.[0];
      if (!durable) throw new Error(`no durable consumer for ${subject.name}`);
      const jsm = await app.connection.jetstreamManager();
      await pollUntil(
        () => jsm.consumers.info(EVENTS_STREAM, durable),
        (info) => info.ack_floor.stream_seq >= seq && info.num_ack_pending === 0,
        { what: `${durable} to acknowledge #${seq}` },
      );
    }

    /**
     * Publishes onto the EVENTS stream as the delivery service's relay does (`Nats-Msg-Id` = event
     * id unless told otherwise), all at once, and waits until this service's consumers have
     * acknowledged them.
     */
    async function publishTogether(
      messages: ReadonlyArray<{ event: OutcomeEvent; msgId?: string }>,
    ): Promise<void> {
      const js = app.connection.jetstream();
      const acks = await Promise.all(
        messages.map(({ event, msgId }) =>
          js.publish(subjectOf(event).name, Buffer.from(JSON.stringify(event)), {
            msgID: msgId ?? event.id,
          }),
        ),
      );
      const lastSeq = new Map<StreamSubject<unknown>, number>();
      messages.forEach(({ event }, index) => {
        const subject = subjectOf(event);
        lastSeq.set(subject, Math.max(lastSeq.get(subject) ?? 0, acks[index]?.seq ?? 0));
      });
      for (const [subject, seq] of lastSeq) await acknowledged(subject, seq);
    }

    async function publish(event: OutcomeEvent, msgId: string = event.id): Promise<void> {
      await publishTogether([{ event, msgId }]);
    }

    function list(accountId: string) {
      return app.rpc.request(SuppressionsSubjects.list, {
        account_id: accountId,
        page: { limit: 10 },
      });
    }

    /**
     * The account's suppression.created events, read once a marker suppression created now has
     * its event on the stream (so every earlier one is there too); the marker's is left out.
     */
    async function createdEvents(accountId: string): Promise<SuppressionCreatedEvent[]> {
      const marker = await createSuppression(app, accountId, { reason: 'marker' });
      const messages = await pollUntil(
        async () =>
          (
            await streamMessages<SuppressionCreatedEvent>(app, SuppressionsStreamSubjects.created)
          ).filter((message) => message.event.data.account_id === accountId),
        (found) => found.some((message) => message.event.data.recipient === marker.email),
        { what: `the marker event of ${accountId}` },
      );
      return messages
        .map((message) => message.event)
        .filter((event) => event.data.recipient !== marker.email);
    }

    function check(delivery: Delivery, domain = delivery.domain) {
      return app.rpc.request(SuppressionsSubjects.check, {
        account_id: delivery.accountId,
        domain,
        emails: [delivery.recipient],
      });
    }

    it('suppresses a hard-bounced recipient for the sending domain, with one suppression.created', async () => {
      const delivery = newDelivery();

      await publish(outcome(delivery, 'message.bounced', 'Bounced', { bounce: 'hard' }));

      const page = await list(delivery.accountId);
      expect(page.data).toEqual([
        {
          object: 'suppression',
          id: expect.any(String) as unknown,
          created_at: expect.any(String) as unknown,
          email: delivery.recipient,
          domain: delivery.domain,
          reason: 'Hard bounce (mx.example.test): 550 5.1.1 no such user',
          expires_at: expect.any(String) as unknown,
        },
      ]);
      const [suppression] = page.data;
      const days =
        (Date.parse(suppression?.expires_at ?? '') - Date.parse(suppression?.created_at ?? '')) /
        86_400_000;
      expect(Math.round(days)).toBe(30);
      const events = await createdEvents(delivery.accountId);
      expect(events.map((event) => event.data)).toEqual([
        {
          account_id: delivery.accountId,
          recipient: delivery.recipient,
          created_at: suppression?.created_at,
          expires_at: suppression?.expires_at,
          reason: suppression?.reason,
          sending_domain: delivery.domain,
        },
      ]);
      // What accept asks before it sends: suppressed from this domain, not from another one.
      await expect(check(delivery)).resolves.toEqual({
        suppressed: [{ email: delivery.recipient, reason: suppression?.reason }],
      });
      await expect(check(delivery, uniqueDomain())).resolves.toEqual({ suppressed: [] });
    });

    it('broadcasts the change of the account once its suppression is committed', async () => {
      const delivery = newDelivery();
      const changed: string[] = [];
      const subscription = subscribeBroadcast(
        app.connection,
        SuppressionsSubjects.changed,
        (event) => changed.push(event.account_id),
        () => undefined,
      );
      try {
        await publish(outcome(delivery, 'message.bounced', 'Bounced', { bounce: 'hard' }));

        // The broadcast was flushed before the event was acknowledged.
        expect(changed).toEqual([delivery.accountId]);
        expect((await list(delivery.accountId)).data).toHaveLength(1);
      } finally {
        subscription.unsubscribe();
      }
    });

    it('suppresses a complaining recipient for the sending domain, reason complaint, once per event', async () => {
      const delivery = newDelivery();
      const complaint: MessageComplaintEvent = {
        id: randomUUID(),
        type: 'message.complaint',
        timestamp: new Date().toISOString(),
        data: {
          account_id: delivery.accountId,
          id: randomUUID(),
          from: `hello@${delivery.domain}`,
          recipient: delivery.recipient,
          feedback_type: 'abuse',
          user_agent: 'Yahoo!-Mail-Feedback/2.0',
        },
      };
      const js = app.connection.jetstream();
      const payload = Buffer.from(JSON.stringify(complaint));
      await js.publish(ComplaintStreamSubjects.complaint.name, payload, { msgID: complaint.id });
      // The same event again under another Nats-Msg-Id: handled once by its event id.
      const { seq } = await js.publish(ComplaintStreamSubjects.complaint.name, payload, {
        msgID: randomUUID(),
      });
      const jsm = await app.connection.jetstreamManager();
      await pollUntil(
        () => jsm.consumers.info(EVENTS_STREAM, 'suppressions-message-complaint'),
        (info) => info.ack_floor.stream_seq >= seq && info.num_ack_pending === 0,
        { what: 'suppressions-message-complaint to acknowledge both' },
      );

      const page = await list(delivery.accountId);
      expect(page.data.map(({ email, domain, reason }) => ({ email, domain, reason }))).toEqual([
        { email: delivery.recipient, domain: delivery.domain, reason: 'complaint' },
      ]);
      const events = await createdEvents(delivery.accountId);
      expect(events.map((event) => [event.data.recipient, event.data.reason])).toEqual([
        [delivery.recipient, 'complaint'],
      ]);
    });

    it('suppresses the recipient of a failure after repeated attempts, not of an expiry or a first-attempt failure', async () => {
      const failed = newDelivery();
      const expired = { ...newDelivery(), accountId: failed.accountId };
      const firstAttempt = { ...newDelivery(), accountId: failed.accountId };

      await publish(outcome(failed, 'message.failed', 'Failed'));
      await publish(outcome(expired, 'message.failed', 'Expired'));
      await publish(outcome(firstAttempt, 'message.failed', 'Failed', { attempt: 1 }));

      const page = await list(failed.accountId);
      expect(page.data.map((suppression) => [suppression.email, suppression.reason])).toEqual([
        [failed.recipient, 'Repeated delivery failures (mx.example.test): 451 4.4.1 timed out'],
      ]);
    });

    it('suppresses nothing for a soft bounce or any sandbox outcome', async () => {
      const delivery = newDelivery();

      await publish(outcome(delivery, 'message.bounced', 'Bounced', { bounce: 'soft' }));
      await publish(
        outcome(delivery, 'message.bounced', 'Sandbox Bounced', { bounce: 'hard', sandbox: true }),
      );
      await publish(outcome(delivery, 'message.failed', 'Sandbox Failed', { sandbox: true }));

      await expect(list(delivery.accountId)).resolves.toMatchObject({ data: [] });
      await expect(check(delivery)).resolves.toEqual({ suppressed: [] });
      await expect(createdEvents(delivery.accountId)).resolves.toEqual([]);
    });

    it('handles an event delivered twice once, even after its suppression was deleted', async () => {
      const delivery = newDelivery();
      const event = outcome(delivery, 'message.bounced', 'Bounced', { bounce: 'hard' });

      await publish(event);
      await publish(event);
      await app.rpc.request(SuppressionsSubjects.delete, {
        account_id: delivery.accountId,
        email: delivery.recipient,
      });
      // A republication the stream cannot recognise (after its duplicate window).
      await publish(event, randomUUID());

      await expect(list(delivery.accountId)).resolves.toMatchObject({ data: [] });
      await expect(createdEvents(delivery.accountId)).resolves.toHaveLength(1);
    });

    it('adds nothing when a suppression already covers the address', async () => {
      const delivery = newDelivery();
      const manual = await createSuppression(app, delivery.accountId, {
        email: delivery.recipient,
        reason: 'manual, every domain',
      });

      await publish(outcome(delivery, 'message.bounced', 'Bounced', { bounce: 'hard' }));

      await expect(list(delivery.accountId)).resolves.toMatchObject({
        data: [{ id: manual.id, domain: null }],
      });
      const events = await createdEvents(delivery.accountId);
      expect(events.map((event) => event.data.reason)).toEqual(['manual, every domain']);
    });

    it('drops a malformed event and goes on with the next', async () => {
      const delivery = newDelivery();
      const malformed = outcome(delivery, 'message.bounced', 'Bounced', { bounce: 'hard' });

      await publish({ ...malformed, data: { ...malformed.data, recipient: 'not an address' } });
      await publish(outcome(delivery, 'message.bounced', 'Bounced', { bounce: 'hard' }));

      await expect(list(delivery.accountId)).resolves.toMatchObject({
        data: [{ email: delivery.recipient }],
      });
    });

    it('handles events arriving together as one by one: each address once, a malformed one a dead letter alone', async () => {
      const accountId = newAccountId();
      const twice = { ...newDelivery(), accountId };
      const other = { ...twice, recipient: uniqueEmail() };
      const conversation = { ...twice, recipient: uniqueEmail() };
      const first = outcome(twice, 'message.bounced', 'Bounced', { bounce: 'hard' });
      const again = outcome(twice, 'message.bounced', 'Bounced', { bounce: 'hard' });
      const malformed = outcome(other, 'message.bounced', 'Bounced', { bounce: 'hard' });
      const delivered: MessageDeliveredEvent = {
        ...outcome(conversation, 'message.bounced', 'Bounced', { bounce: 'hard' }),
        type: 'message.delivered',
      };
      delivered.data = { ...delivered.data, event: 'on_delivered', status: 'Delivered' };

      await publishTogether([
        { event: first },
        { event: first, msgId: randomUUID() },
        { event: { ...malformed, data: { ...malformed.data, account_id: 'not an account' } } },
        { event: again },
        { event: outcome(other, 'message.bounced', 'Bounced', { bounce: 'hard' }) },
        { event: delivered },
      ]);

      const page = await list(accountId);
      expect(page.data.map(({ email, reason }) => [email, reason]).sort()).toEqual(
        [
          [twice.recipient, 'Hard bounce (mx.example.test): 550 5.1.1 no such user'],
          [other.recipient, 'Hard bounce (mx.example.test): 550 5.1.1 no such user'],
          [conversation.recipient, 'Hard bounce (mx.example.test): 550 5.1.1 no such user'],
        ].sort(),
      );
      const events = await createdEvents(accountId);
      expect(events.map((event) => event.data.recipient).sort()).toEqual(
        [twice.recipient, other.recipient, conversation.recipient].sort(),
      );
      await expect(
        app.dataSource.query(
          `SELECT durable FROM suppressions.dead_letters
            WHERE position(convert_to($1, 'UTF8') in payload) > 0`,
          [malformed.id],
        ),
      ).resolves.toEqual([{ durable: 'suppressions-message-bounced' }]);
    });

    it("handles an outcome batch's events each once, as if each came alone", async () => {
      const accountId = newAccountId();
      const bounced = { ...newDelivery(), accountId };
      const failed = { ...bounced, recipient: uniqueEmail() };
      const deliveredTo = { ...bounced, recipient: uniqueEmail() };
      const delivered: MessageDeliveredEvent = {
        ...outcome(deliveredTo, 'message.bounced', 'Bounced'),
        type: 'message.delivered',
      };
      delivered.data = {
        ...delivered.data,
        event: 'on_delivered',
        status: 'Delivered',
        recipients: [
          { email: deliveredTo.recipient, result: 'delivered', remote_host: '', reply: '250 ok' },
        ],
      };
      const batch: DeliveryOutcomeBatchEvent = {
        id: randomUUID(),
        type: 'message.outcome_batch',
        timestamp: new Date().toISOString(),
        data: {
          events: [
            delivered,
            outcome(bounced, 'message.bounced', 'Bounced', { bounce: 'hard' }),
            outcome(failed, 'message.failed', 'Failed', { attempt: 3 }),
          ],
        },
      };
      const publishBatch = async (msgId: string) => {
        const subject = DeliveryStreamSubjects.outcomeBatch;
        const ack = await app.connection
          .jetstream()
          .publish(subject.name, Buffer.from(JSON.stringify(batch)), { msgID: msgId });
        await acknowledged(subject, ack.seq);
      };

      await publishBatch(batch.id);
      // A republication the stream cannot recognise (after its duplicate window).
      await publishBatch(randomUUID());

      const page = await list(accountId);
      expect(page.data.map(({ email, reason }) => [email, reason]).sort()).toEqual(
        [
          [bounced.recipient, 'Hard bounce (mx.example.test): 550 5.1.1 no such user'],
          [failed.recipient, 'Repeated delivery failures (mx.example.test): 451 4.4.1 timed out'],
        ].sort(),
      );
      const events = await createdEvents(accountId);
      expect(events.map((event) => event.data.recipient).sort()).toEqual(
        [bounced.recipient, failed.recipient].sort(),
      );
    });

    it('replaces an expired suppression of the address and domain', async () => {
      const delivery = newDelivery();
      const old = await createSuppression(app, delivery.accountId, {
        email: delivery.recipient,
        domain: delivery.domain,
        reason: 'old',
      });
      await expire(app, old);

      await publish(outcome(delivery, 'message.bounced', 'Bounced', { bounce: 'hard' }));

      const page = await list(delivery.accountId);
      expect(page.data.map(({ id, reason }) => [id === old.id, reason])).toEqual([
        [false, 'Hard bounce (mx.example.test): 550 5.1.1 no such user'],
      ]);
      await expect(storedRows(app, delivery.accountId)).resolves.toBe(1);
    });

    it('forgets handled events once the stream can no longer deliver them, in bounded batches', async () => {
      const purger = app.app.get(ExpiredPurgeService);
      for (let run = 0; run < 100 && (await purger.purgeProcessedEvents()) > 0; run++);
      const delivery = newDelivery();
      const event = outcome(delivery, 'message.bounced', 'Bounced', { bounce: 'hard' });
      await publish(event);
      const age = `${app.config.PROCESSED_EVENTS_RETENTION_MS + 60_000} milliseconds`;

      await app.dataSource.query(
        `UPDATE suppressions.processed_events SET processed_at = now() - $2::interval
          WHERE event_id = $1`,
        [event.id, age],
      );

      await expect(purger.purgeProcessedEvents()).resolves.toBe(1);
      await expect(
        app.dataSource.query('SELECT 1 FROM suppressions.processed_events WHERE event_id = $1', [
          event.id,
        ]),
      ).resolves.toEqual([]);
    });
  });
}
