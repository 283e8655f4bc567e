import { createHash, randomBytes, randomUUID } from 'node:crypto';

import type { DeliveryOutcomeEvent } from '@envoi/contracts-delivery';
import {
  type CreateConversationBody,
  type DeliveryView,
  INLINE_PAYLOAD_MAX_BYTES,
  MESSAGE_DOWNLOADS_BUCKET,
  type MessageRecord,
  MessagesErrorCode,
  MessagesSubjects,
  type MessageStatus,
  SANDBOX_STATUS,
  type SendSourcesRecord,
} from '@envoi/contracts-messages';
import { SuppressionsSubjects } from '@envoi/contracts-suppressions';
import {
  fromSourcesRecord,
  HtmlTracker,
  recipientPartOfView,
  StoredComposer,
} from '@envoi/shared-composition';
import { takeUpload } from '@envoi/shared-nats';
import { pollUntil } from '@envoi/shared-testing';

import {
  type EventTarget,
  handledUpTo,
  outcomeBatch,
  outcomeEvent,
  type OutcomeOptions,
  publishOutcome,
} from '../delivery-events';
import {
  createDomain,
  messageBody,
  type MessagesTestApp,
  newSender,
  send,
  type Sender,
  UNKNOWN_ID,
  uuidOf,
} from '../messages-test-app';
import { getMessage, storedRaw } from './accept.suite';

function deliveryView(app: MessagesTestApp, messageId: string): Promise<DeliveryView> {
  return app.rpc.request(MessagesSubjects.deliveryView, { message_id: messageId });
}

/** Attempt times a minute apart, in the order the delivery service would log them. */
function minute(n: number): Date {
  return new Date(Date.UTC(2030, 0, 1, 12, n));
}

export function deliverySuite(getApp: () => MessagesTestApp): void {
  describe('messages service: delivery view and status machine', () => {
    let app: MessagesTestApp;

    beforeAll(() => {
      app = getApp();
    });

    /** One accepted message (one recipient) and what its events need. */
    async function accepted(
      overrides: Parameters<typeof messageBody>[1] = {},
      sender?: Sender,
    ): Promise<EventTarget & { sender: Sender }> {
      const from = sender ?? (await newSender(app));
      const body = messageBody(from, overrides);
      const result = await send(app, from, body);
      const header = result.data[0]?.id ?? '';
      return {
        sender: from,
        id: uuidOf(header),
        header,
        accountId: from.accountId,
        from: from.from,
        recipient: body.recipients[0]?.email ?? '',
      };
    }

    /** Publishes the event and waits until the status machine has acknowledged it. */
    async function deliver(
      target: EventTarget,
      type: DeliveryOutcomeEvent['type'],
      options: OutcomeOptions,
    ): Promise<DeliveryOutcomeEvent> {
      const event = outcomeEvent(target, type, options);
      await handledUpTo(app, type, await publishOutcome(app, event));
      return event;
    }

    function read(target: EventTarget): Promise<MessageRecord> {
      return getMessage(app, target.accountId, target.id);
    }

    async function processedEvents(id: string): Promise<number> {
      const [row] = await app.dataSource.query<Array<{ count: number }>>(
        'SELECT count(*)::int AS count FROM messages.processed_events WHERE record_id = $1',
        [id],
      );
      return row?.count ?? 0;
    }

    describe('delivery view', () => {
      it('shows a send with its one recipient, its state and its raw content inline', async () => {
        const target = await accepted({
          recipients: [{ email: 'Solo@Recipient.test', name: 'Solo' }],
          tracking: { open: true, click: false },
          sandbox: true,
          sandbox_result: 'defer',
          schedule: {
            first_attempt: new Date(Date.now() + 3_600_000).toISOString(),
            expires: new Date(Date.now() + 7_200_000).toISOString(),
          },
        });
        const record = await read(target);

        const view = await deliveryView(app, target.id);

        expect(view).toEqual({
          id: target.id,
          message_id_header: target.header,
          account_id: target.accountId,
          domain_id: target.sender.domain.id,
          domain: target.sender.domain.domain,
          sender: target.from,
          subject: 'Hello',
          envelope_recipients: ['solo@recipient.test'],
          status: 'Scheduled',
          sandbox: true,
          sandbox_result: 'defer',
          first_attempt_at: expect.any(String) as unknown,
          expires_at: expect.any(String) as unknown,
          tracking: { open: true, click: false },
          content_base64: expect.any(String) as unknown,
        });
        expect(Buffer.from(view.content_base64 ?? '', 'base64').toString('utf8')).toBe(
          record.content,
        );
        expect(Date.parse(view.expires_at ?? '')).toBeGreaterThan(
          Date.parse(view.first_attempt_at ?? ''),
        );
      });

      it('shows every to, cc and bcc address of a conversation on the envelope', async () => {
        const sender = await newSender(app);
        const body: CreateConversationBody = {
          from: { email: sender.from },
          to: [{ email: 'ann@recipient.test' }, { email: 'bob@recipient.test' }],
          cc: [{ email: 'Carol@Recipient.test' }],
          bcc: [{ email: 'dave@recipient.test' }],
          subject: 'Meeting',
          text_content: 'Agenda',
        };
        const result = await app.rpc.request(MessagesSubjects.createConversation, {
          account_id: sender.accountId,
          api: 'v2',
          body,
        });

        const view = await deliveryView(app, uuidOf(result.data[0]?.id ?? null));

        expect(view).toMatchObject({
          envelope_recipients: [
            'ann@recipient.test',
            'bob@recipient.test',
            'carol@recipient.test',
            'dave@recipient.test',
          ],
          status: 'Received',
          sandbox: false,
          sandbox_result: null,
          first_attempt_at: null,
          expires_at: null,
        });
        const raw = Buffer.from(view.content_base64 ?? '', 'base64').toString('utf8');
        expect(raw).toContain('Subject: Meeting');
        // Bcc travels on the envelope only.
        expect(raw.toLowerCase()).not.toContain('dave@recipient.test');
      });

      it('hands a large message over through the downloads bucket, byte for byte', async () => {
        const attachment = randomBytes(600_000).toString('base64');
        const target = await accepted({
          attachments: [
            {
              file_name: 'big.bin',
              content_type: 'application/octet-stream',
              data: attachment,
              base64: true,
            },
          ],
        });
        const raw = await storedRaw(app, target.id);

        const view = await deliveryView(app, target.id);

        expect(view.content_base64).toBeUndefined();
        expect(view.content_download).toMatchObject({
          bucket: MESSAGE_DOWNLOADS_BUCKET,
          size: raw?.length,
          sha256: createHash('sha256')
            .update(raw ?? Buffer.alloc(0))
            .digest('hex'),
        });
        expect(view.content_download?.size).toBeGreaterThan((INLINE_PAYLOAD_MAX_BYTES / 4) * 3);
        if (!view.content_download) return;
        const bytes = await takeUpload(app.connection, view.content_download);
        expect(bytes.equals(raw ?? Buffer.alloc(0))).toBe(true);
      });

      it('shows a job’s messages in one reply, inline while it fits, the rest left to one by one', async () => {
        const sender = await newSender(app);
        const attachment = randomBytes(200_000).toString('base64');
        const body = messageBody(sender, {
          recipients: [1, 2, 3].map((n) => ({ email: `views-${n}@recipient.test` })),
          attachments: [
            {
              file_name: 'part.bin',
              content_type: 'application/octet-stream',
              data: attachment,
              base64: true,
            },
          ],
        });
        const result = await send(app, sender, body);
        const ids = result.data.map((entry) => uuidOf(entry.id));
        const small = await accepted({}, sender);

        const reply = await app.rpc.request(MessagesSubjects.deliveryViews, {
          message_ids: [small.id, ids[0] ?? '', UNKNOWN_ID, ids[1] ?? '', ids[2] ?? ''],
        });

        // In the order asked, the unknown one left out; from the first that does not fit on
        // (the third, two of ~360 kB in base64 exceed the reply), ids only.
        expect(reply.views.map((view) => view.id)).toEqual([small.id, ids[0]]);
        expect(reply.separately).toEqual([ids[1], ids[2]]);
        expect(Buffer.byteLength(JSON.stringify(reply))).toBeLessThanOrEqual(
          INLINE_PAYLOAD_MAX_BYTES,
        );
        for (const view of reply.views) {
          const { content_base64, ...bare } = view;
          const single = await deliveryView(app, view.id);
          expect({ ...single, content_base64: undefined }).toEqual({
            ...bare,
            content_base64: undefined,
          });
          const raw = await storedRaw(app, view.id);
          expect(Buffer.from(content_base64 ?? '', 'base64').equals(raw ?? Buffer.alloc(1))).toBe(
            true,
          );
        }
        await expect(
          app.rpc.request(MessagesSubjects.deliveryViews, { message_ids: [] }),
        ).rejects.toMatchObject({ code: 'common.validation_failed' });
      });

      it('v2: carries each send’s sources once (through the bucket when large), and the worker’s composition gives the stored bytes', async () => {
        const sender = await newSender(app);
        const attachment = randomBytes(400_000).toString('base64');
        const body = messageBody(sender, {
          recipients: [1, 2, 3].map((n) => ({
            email: `v2-${n}@recipient.test`,
            substitutions: { name: `R${n}` },
          })),
          subject: 'Hello {{ name }}',
          html_content:
            '<p>Hi {{ name }}, <a href="https://example.com/{{ name }}">go</a></p></body>',
          attachments: [
            {
              file_name: 'part.bin',
              content_type: 'application/octet-stream',
              data: attachment,
              base64: true,
            },
          ],
          tracking: { open: true, click: true },
        });
        const result = await send(app, sender, body);
        const ids = result.data.map((entry) => uuidOf(entry.id));
        const small = await accepted({}, sender);

        const reply = await app.rpc.request(MessagesSubjects.deliveryViewsV2, {
          message_ids: [ids[0] ?? '', small.id, UNKNOWN_ID, ids[1] ?? '', ids[2] ?? ''],
        });

        expect(reply.views.map((view) => view.id)).toEqual([ids[0], small.id, ids[1], ids[2]]);
        expect(reply.separately).toEqual([]);
        expect(Buffer.byteLength(JSON.stringify(reply))).toBeLessThanOrEqual(
          INLINE_PAYLOAD_MAX_BYTES,
        );
        // One entry per send: the large one's sources through the bucket, the small one's inline.
        const sendIds = reply.views.map((view) => view.composition?.send_id ?? '');
        expect(new Set(sendIds).size).toBe(2);
        expect(reply.sends.map((entry) => entry.id)).toEqual([sendIds[0], sendIds[1]]);
        const [large, inline] = reply.sends;
        expect(large?.sources).toBeUndefined();
        expect(inline?.sources).toBeDefined();
        if (!large?.sources_download || !inline?.sources) throw new Error('unexpected reply');
        const sendSources = new Map([
          [
            large.id,
            fromSourcesRecord(
              JSON.parse(
                (await takeUpload(app.connection, large.sources_download)).toString('utf8'),
              ) as SendSourcesRecord,
            ),
          ],
          [inline.id, fromSourcesRecord(inline.sources)],
        ]);
        // Composed as the delivery worker composes, with the same tracking settings.
        const composer = new StoredComposer(new HtmlTracker(app.config));
        for (const view of reply.views) {
          const { composition } = view;
          const sources = composition && sendSources.get(composition.send_id);
          if (!composition || !sources) throw new Error(`${view.id}: nothing to compose`);
          const composed = await composer.compose(sources, recipientPartOfView(view, composition));
          const raw = await storedRaw(app, view.id);
          expect(composed.equals(raw ?? Buffer.alloc(0))).toBe(true);
        }
        const second = (await storedRaw(app, ids[1] ?? ''))?.toString('latin1') ?? '';
        expect(second).toContain('Subject: Hello R2');
      });

      it('answers not found for an unknown message and refuses an id that is not a uuid', async () => {
        await expect(deliveryView(app, UNKNOWN_ID)).rejects.toMatchObject({
          code: MessagesErrorCode.MessageNotFound,
        });
        await expect(deliveryView(app, 'nope')).rejects.toMatchObject({
          code: 'common.validation_failed',
        });
      });
    });

    describe('status machine', () => {
      it('applies events in order: deferred, then delivered', async () => {
        const target = await accepted();
        const before = await read(target);

        await deliver(target, 'message.transient_error', {
          status: 'Deferred',
          time: minute(0),
          reply: '451 4.7.1 greylisted',
        });
        await expect(read(target)).resolves.toMatchObject({
          status: 'Deferred',
          num_attempts: 1,
          sent_at: minute(0).toISOString(),
          delivered_at: null,
        });
        await deliver(target, 'message.delivered', {
          status: 'Delivered',
          time: minute(5),
          reply: '250 2.0.0 OK queued',
          attempt: 2,
        });

        const record = await read(target);
        expect(record).toMatchObject({
          status: 'Delivered',
          num_attempts: 2,
          sent_at: minute(0).toISOString(),
          delivered_at: minute(5).toISOString(),
          bounce_classification: '',
          delivery_attempts: [
            {
              time: minute(0).toISOString(),
              log: 'mx.recipient.test: 451 4.7.1 greylisted',
              status: 'Deferred',
            },
            {
              time: minute(5).toISOString(),
              log: 'mx.recipient.test: 250 2.0.0 OK queued',
              status: 'Delivered',
            },
          ],
        });
        expect(Date.parse(record.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
        await expect(deliveryView(app, target.id)).resolves.toMatchObject({
          status: 'Delivered',
        });
      });

      it('keeps a message delivered when an earlier deferral arrives after the delivery', async () => {
        const target = await accepted();

        await deliver(target, 'message.delivered', { status: 'Delivered', time: minute(5) });
        await deliver(target, 'message.transient_error', { status: 'Deferred', time: minute(0) });

        const record = await read(target);
        expect(record).toMatchObject({
          status: 'Delivered',
          num_attempts: 2,
          sent_at: minute(0).toISOString(),
          delivered_at: minute(5).toISOString(),
        });
        expect(record.delivery_attempts.map((attempt) => attempt.status)).toEqual([
          'Deferred',
          'Delivered',
        ]);
      });

      it('records an event delivered twice once', async () => {
        const target = await accepted();
        const event = outcomeEvent(target, 'message.transient_error', {
          status: 'Deferred',
          time: minute(0),
        });

        // The same publication twice: the stream drops the second (Nats-Msg-Id).
        await publishOutcome(app, event);
        // A republication the stream cannot recognise (after its duplicate window): the status
        // machine drops it (event id).
        const seq = await publishOutcome(app, event, randomUUID());
        await publishOutcome(app, event);
        await handledUpTo(app, 'message.transient_error', seq);

        await expect(read(target)).resolves.toMatchObject({
          status: 'Deferred',
          num_attempts: 1,
          delivery_attempts: [expect.objectContaining({ status: 'Deferred' }) as unknown],
        });
        await expect(processedEvents(target.id)).resolves.toBe(1);
      });

      it("applies an outcome batch's events each once, like the same events alone", async () => {
        const [first, second] = [await accepted(), await accepted()];
        const deferred = outcomeEvent(first, 'message.transient_error', {
          status: 'Deferred',
          time: minute(0),
        });
        const delivered = outcomeEvent(second, 'message.delivered', {
          status: 'Delivered',
          time: minute(0),
        });
        const batch = outcomeBatch([deferred, delivered]);

        await handledUpTo(app, 'message.outcome_batch', await publishOutcome(app, batch));
        await expect(read(first)).resolves.toMatchObject({ status: 'Deferred', num_attempts: 1 });
        await expect(read(second)).resolves.toMatchObject({ status: 'Delivered', num_attempts: 1 });

        // The batch republished where the stream cannot recognise it, and one of its events alone
        // (published before batches): nothing applies twice. Then a later batch moves on.
        await handledUpTo(
          app,
          'message.outcome_batch',
          await publishOutcome(app, batch, randomUUID()),
        );
        await handledUpTo(app, 'message.transient_error', await publishOutcome(app, deferred));
        const later = outcomeEvent(first, 'message.delivered', {
          status: 'Delivered',
          time: minute(5),
          attempt: 2,
        });
        await handledUpTo(
          app,
          'message.outcome_batch',
          await publishOutcome(app, outcomeBatch([later, delivered])),
        );

        await expect(read(first)).resolves.toMatchObject({
          status: 'Delivered',
          num_attempts: 2,
          delivery_attempts: [
            expect.objectContaining({ status: 'Deferred' }) as unknown,
            expect.objectContaining({ status: 'Delivered' }) as unknown,
          ],
        });
        await expect(read(second)).resolves.toMatchObject({ status: 'Delivered', num_attempts: 1 });
        await expect(processedEvents(first.id)).resolves.toBe(2);
        await expect(processedEvents(second.id)).resolves.toBe(1);
      });

      it('applies the other events of a batch when it cannot read one of them', async () => {
        const [target, other] = [await accepted(), await accepted()];
        const delivered = outcomeEvent(target, 'message.delivered', {
          status: 'Delivered',
          time: minute(0),
        });
        const unreadable = outcomeEvent(other, 'message.delivered', {
          status: 'Bounced',
          time: minute(0),
        });

        await handledUpTo(
          app,
          'message.outcome_batch',
          await publishOutcome(app, outcomeBatch([unreadable, delivered])),
        );

        await expect(read(target)).resolves.toMatchObject({ status: 'Delivered' });
        await expect(processedEvents(other.id)).resolves.toBe(0);
      });

      it('lets an asynchronous bounce follow a delivery, keeping delivered_at', async () => {
        const target = await accepted();

        await deliver(target, 'message.delivered', { status: 'Delivered', time: minute(0) });
        await deliver(target, 'message.bounced', {
          status: 'Bounced',
          time: minute(30),
          remoteHost: '',
          reply: '550 5.1.1 mailbox unavailable (DSN)',
          bounce: 'hard',
        });
        // Nothing moves a bounced message any more.
        await deliver(target, 'message.delivered', { status: 'Delivered', time: minute(40) });

        await expect(read(target)).resolves.toMatchObject({
          status: 'Bounced',
          bounce_classification: 'hard',
          delivered_at: minute(0).toISOString(),
          num_attempts: 3,
        });
      });

      it('ends each sandbox outcome in its sandbox status, and nothing moves it', async () => {
        const sender = await newSender(app);
        const types: Record<keyof typeof SANDBOX_STATUS, DeliveryOutcomeEvent['type']> = {
          deliver: 'message.delivered',
          bounce: 'message.bounced',
          defer: 'message.transient_error',
          fail: 'message.failed',
          suppress: 'message.suppressed',
        };
        for (const [result, type] of Object.entries(types) as Array<
          [keyof typeof SANDBOX_STATUS, DeliveryOutcomeEvent['type']]
        >) {
          const target = await accepted({ sandbox: true, sandbox_result: result }, sender);
          const status = SANDBOX_STATUS[result];

          await deliver(target, type, {
            status,
            time: minute(0),
            remoteHost: '',
            sandbox: true,
            ...(result === 'bounce' ? { bounce: 'hard' as const } : {}),
          });
          await deliver(target, 'message.delivered', { status: 'Delivered', time: minute(1) });

          const record = await read(target);
          expect([result, record.status]).toEqual([result, status]);
          expect([result, record.delivery_attempts.length]).toEqual([result, 2]);
        }
      });

      it('shows a failure, an expiry and a suppression as final', async () => {
        const cases: Array<[DeliveryOutcomeEvent['type'], MessageStatus, number]> = [
          ['message.failed', 'Failed', 1],
          ['message.failed', 'Expired', 0],
          ['message.suppressed', 'Suppressed', 0],
        ];
        const sender = await newSender(app);
        for (const [type, status, attempts] of cases) {
          const target = await accepted({}, sender);

          await deliver(target, type, { status, time: minute(0) });
          await deliver(target, 'message.transient_error', { status: 'Deferred', time: minute(1) });

          await expect(read(target)).resolves.toMatchObject({
            status,
            num_attempts: attempts + 1,
          });
        }
      });

      it('drops events it can never apply and goes on with the next', async () => {
        const target = await accepted();
        const unknown = outcomeEvent({ ...target, id: UNKNOWN_ID }, 'message.delivered', {
          status: 'Delivered',
        });
        const foreign = outcomeEvent({ ...target, accountId: randomUUID() }, 'message.delivered', {
          status: 'Delivered',
        });
        const malformed = { id: randomUUID(), type: 'message.delivered' as const, data: {} };

        await publishOutcome(app, unknown);
        await publishOutcome(app, foreign);
        await publishOutcome(app, malformed);
        await deliver(target, 'message.delivered', { status: 'Delivered', time: minute(0) });

        await expect(read(target)).resolves.toMatchObject({
          status: 'Delivered',
          num_attempts: 1,
        });
      });
    });

    describe('data retention 0', () => {
      it('keeps the content while delivery goes on and empties it once the status is final', async () => {
        const target = await accepted({ retention: { metadata: 3, data: 0 } });

        await deliver(target, 'message.transient_error', { status: 'Deferred', time: minute(0) });
        await expect(read(target)).resolves.toMatchObject({
          content: expect.stringContaining('Subject: Hello') as unknown,
        });
        await expect(deliveryView(app, target.id)).resolves.toHaveProperty('content_base64');

        await deliver(target, 'message.delivered', { status: 'Delivered', time: minute(1) });

        await expect(read(target)).resolves.toMatchObject({
          status: 'Delivered',
          content: null,
          content_parsed: null,
        });
        const view = await deliveryView(app, target.id);
        expect(view.content_base64).toBeUndefined();
        expect(view.content_download).toBeUndefined();
      });

      it('keeps content with a data retention of days after delivery', async () => {
        const target = await accepted({ retention: { metadata: 3, data: 1 } });

        await deliver(target, 'message.delivered', { status: 'Delivered', time: minute(0) });

        await expect(read(target)).resolves.toMatchObject({
          status: 'Delivered',
          content: expect.stringContaining('Subject: Hello') as unknown,
        });
      });

      it('empties the content of a cancelled message at once', async () => {
        const target = await accepted({
          retention: { metadata: 3, data: 0 },
          schedule: { first_attempt: new Date(Date.now() + 3_600_000).toISOString() },
        });

        await app.rpc.request(MessagesSubjects.cancelMessage, {
          account_id: target.accountId,
          message_id: target.header,
        });

        await expect(read(target)).resolves.toMatchObject({
          status: 'Cancelled',
          content: null,
        });
      });
    });

    it('suppresses a hard-bounced address for its sending domain: the next send from there is refused at accept time', async () => {
      const target = await accepted();

      await deliver(target, 'message.bounced', {
        status: 'Bounced',
        reply: '550 5.1.1 no such user',
        bounce: 'hard',
      });

      // The suppressions service (its own process) consumes the same event.
      await pollUntil(
        () =>
          app.rpc.request(SuppressionsSubjects.check, {
            account_id: target.accountId,
            domain: target.sender.domain.domain,
            emails: [target.recipient],
          }),
        (answer) => answer.suppressed.length === 1,
        { what: 'the bounced address to be suppressed' },
      );
      const again = await send(
        app,
        target.sender,
        messageBody(target.sender, { recipients: [{ email: target.recipient }] }),
      );
      expect(again.data[0]).toMatchObject({
        id: null,
        status: 'error',
        error: expect.stringMatching(/^recipient is suppressed: Hard bounce/) as unknown,
      });
      const otherDomain = await createDomain(app, target.accountId);
      const other = { ...target.sender, domain: otherDomain, from: `info@${otherDomain.domain}` };
      const fromOther = await send(
        app,
        other,
        messageBody(other, { recipients: [{ email: target.recipient }] }),
      );
      expect(fromOther.data[0]).toMatchObject({ status: 'queued' });
    });
  });
}
