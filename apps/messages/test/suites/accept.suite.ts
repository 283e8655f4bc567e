import { AccountsSubjects } from '@envoi/contracts-accounts';
import {
  type AnyDeliveryJob,
  deliveryJobMessageIds,
  type MessageRecord,
  MessagesErrorCode,
  MessagesSubjects,
} from '@envoi/contracts-messages';
import { pollUntil, WebhookPayloadValidator } from '@envoi/shared-testing';

import { MessageContents } from '../../src/messages/message-contents.service';
import { MessagesRepository } from '../../src/messages/messages.repository';
import {
  collected,
  createAccount,
  createDomain,
  messageBody,
  type MessagesTestApp,
  newSender,
  send,
  suppress,
  uuidOf,
} from '../messages-test-app';

const webhookPayloads = new WebhookPayloadValidator();

interface StoredMessage {
  id: string;
  status: string;
  recipient: string;
  envelope_recipients: string[];
  subject: string;
  tags: string[];
  message_id_header: string;
  sandbox: boolean;
  sandbox_result: string | null;
  track_opens: boolean;
  track_clicks: boolean;
  retention_metadata_days: number;
  retention_data_days: number;
  api: string;
  kind: string;
  domain: string;
  domain_id: string;
  job_id: string;
  created_at: Date;
  retain_until: Date;
  purge_at: Date;
}

/** The messages as stored, with the data retention of their send. */
export function storedMessages(app: MessagesTestApp, ids: string[]): Promise<StoredMessage[]> {
  return app.dataSource.query<StoredMessage[]>(
    `SELECT m.*, s.purge_at FROM messages.messages m
       JOIN messages.sends s ON s.id = m.send_id
      WHERE m.id = ANY($1) ORDER BY m.seq`,
    [ids],
  );
}

/** The message's raw content as the service composes it for delivery; null once purged. */
export async function storedRaw(app: MessagesTestApp, id: string): Promise<Buffer | null> {
  const message = await app.app.get(MessagesRepository).findById(id);
  if (!message) throw new Error(`no message ${id}`);
  return app.app.get(MessageContents).raw(message);
}

/** The header's values, whatever the case of its name. */
export function headerOf(record: MessageRecord, name: string): string[] {
  const headers = record.content_parsed?.headers ?? {};
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  return key ? (headers[key] ?? []) : [];
}

export function getMessage(
  app: MessagesTestApp,
  accountId: string,
  messageId: string,
): Promise<MessageRecord> {
  return app.rpc.request(MessagesSubjects.getMessage, {
    account_id: accountId,
    message_id: messageId,
  });
}

/** An outbox row with a job or an event (alone or in a batch row) of the messages `$1` lists. */
const OUTBOX_ROW_OF_MESSAGES = `(payload->>'message_id' = ANY($1::text[])
  OR payload->'data'->>'id' = ANY($1::text[])
  OR payload->'message_ids' ?| $1::text[]
  OR EXISTS (SELECT FROM jsonb_array_elements(payload->'$events') AS event
              WHERE event->'data'->>'id' = ANY($1::text[]))
  OR EXISTS (SELECT FROM jsonb_array_elements(payload->'data'->'events') AS event
              WHERE event->'data'->>'id' = ANY($1::text[])))`;

/** Waits until the relay has published every outbox row of these messages' sends. */
export async function outboxSettled(app: MessagesTestApp, messageIds: string[]): Promise<void> {
  await pollUntil(
    () =>
      app.dataSource.query<Array<{ pending: string }>>(
        `SELECT count(*) AS pending FROM messages.outbox
          WHERE published_at IS NULL AND cancelled_at IS NULL AND available_at <= now()
            AND ${OUTBOX_ROW_OF_MESSAGES}`,
        [messageIds],
      ),
    (rows) => rows[0]?.pending === '0',
    { what: 'the outbox to be published' },
  );
}

export function acceptSuite(getApp: () => MessagesTestApp): void {
  describe('messages service: accepting sends', () => {
    let app: MessagesTestApp;

    beforeAll(() => {
      app = getApp();
    });

    it('accepts one recipient: committed message and content, one job and one reception event', async () => {
      const sender = await newSender(app);
      const body = messageBody(sender, {
        recipients: [{ email: 'Solo@Recipient.test' }],
        tags: ['welcome', 'onboarding'],
      });

      const result = await send(app, sender, body);

      expect(result).toEqual({
        object: 'list',
        data: [
          {
            object: 'message',
            id: expect.stringMatching(
              new RegExp(
                `^<[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}@${sender.domain.domain}>$`,
              ),
            ) as unknown,
            recipient: { email: 'Solo@Recipient.test', name: '' },
            status: 'queued',
            error: null,
          },
        ],
      });
      const header = result.data[0]?.id ?? null;
      const id = uuidOf(header);
      const [row] = await storedMessages(app, [id]);
      expect(row).toMatchObject({
        status: 'Received',
        recipient: 'Solo@Recipient.test',
        envelope_recipients: ['solo@recipient.test'],
        subject: 'Hello',
        tags: ['welcome', 'onboarding'],
        message_id_header: header,
        sandbox: false,
        api: 'v2',
        kind: 'message',
        domain: sender.domain.domain,
        domain_id: sender.domain.id,
      });
      expect((await storedRaw(app, id))?.length).toBeGreaterThan(100);

      const [job] = await collected(
        app.jobs,
        (candidate) => deliveryJobMessageIds(candidate).includes(id),
        1,
      );
      expect(job?.value).toEqual({ message_id: id, account_id: sender.accountId, attempt: 1 });
      expect(job?.msgId).toBe(row?.job_id);
      const [event] = await collected(app.events, (candidate) => candidate.data.id === id, 1);
      expect(event?.batch).toEqual({ msgId: event?.msgId, size: 1 });
      expect(event?.value).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
        type: 'message.reception',
        timestamp: expect.any(String) as unknown,
        data: {
          account_id: sender.accountId,
          event: 'on_reception',
          from: sender.from,
          recipient: 'Solo@Recipient.test',
          subject: 'Hello',
          message_id_header: header,
          id,
          is_bot: false,
        },
      });
      expect(webhookPayloads.eventViolations(event.value)).toEqual([]);
    });

    it('accepts 100 recipients in one transaction: one message each, each job and event exactly once', async () => {
      const sender = await newSender(app);
      const recipients = Array.from({ length: 100 }, (_, n) => ({
        email: `bulk-${n}@recipient.test`,
        name: `Bulk ${n}`,
      }));

      const result = await send(app, sender, messageBody(sender, { recipients }));

      expect(result.data.map((entry) => entry.recipient)).toEqual(recipients);
      expect(result.data.every((entry) => entry.status === 'queued')).toBe(true);
      const ids = result.data.map((entry) => uuidOf(entry.id));
      expect(new Set(ids).size).toBe(100);
      const [transactions] = await app.dataSource.query<Array<{ count: string }>>(
        `SELECT count(DISTINCT xmin::text) AS count FROM (
           SELECT xmin FROM messages.messages WHERE id = ANY($1)
           UNION ALL SELECT s.xmin FROM messages.sends s
             JOIN messages.messages m ON m.send_id = s.id WHERE m.id = ANY($1)
           UNION ALL SELECT xmin FROM messages.outbox
            WHERE ${OUTBOX_ROW_OF_MESSAGES}
         ) rows`,
        [ids],
      );
      expect(transactions?.count).toBe('1');
      const rows = await storedMessages(app, ids);
      expect(rows.map((row) => row.recipient)).toEqual(recipients.map((r) => r.email));

      const wanted = new Set(ids);
      // One delivery job for the whole send (a chunk of up to DELIVERY_JOB_MAX_MESSAGES).
      const covers = (job: AnyDeliveryJob) =>
        deliveryJobMessageIds(job).some((id) => wanted.has(id));
      await collected(app.jobs, covers, 1);
      await collected(app.events, (event) => wanted.has(event.data.id), 100);
      await outboxSettled(app, ids);
      const jobs = app.jobs.of(covers);
      const events = app.events.of((event) => wanted.has(event.data.id));
      expect(jobs.map((job) => job.value)).toEqual([
        { message_ids: ids, account_id: sender.accountId, attempt: 1 },
      ]);
      expect(new Set(rows.map((row) => row.job_id))).toEqual(new Set([jobs[0]?.msgId]));
      expect(events).toHaveLength(100);
      expect(new Set(events.map((event) => event.value.id)).size).toBe(100);
      // The send's reception events travel in one stream message.
      expect(new Set(events.map((event) => event.msgId)).size).toBe(1);
      expect(events[0]?.batch?.size).toBe(100);

      // One recipient per message: its To header holds that recipient only.
      const last = await getMessage(app, sender.accountId, ids[99] ?? '');
      expect(headerOf(last, 'to')).toEqual(['Bulk 99 <bulk-99@recipient.test>']);
    });

    it('answers error for a suppressed recipient and queues the others', async () => {
      const sender = await newSender(app);
      await suppress(app, sender.accountId, 'blocked@recipient.test', 'hard bounce');

      const result = await send(
        app,
        sender,
        messageBody(sender, {
          recipients: [
            { email: 'ok-1@recipient.test' },
            { email: 'Blocked@Recipient.test', name: 'Blocked' },
            { email: 'ok-2@recipient.test' },
          ],
        }),
      );

      expect(result.data.map((entry) => [entry.status, entry.error])).toEqual([
        ['queued', null],
        ['error', 'recipient is suppressed: hard bounce'],
        ['queued', null],
      ]);
      expect(result.data[1]).toMatchObject({
        id: null,
        recipient: { email: 'Blocked@Recipient.test', name: 'Blocked' },
      });
      const [count] = await app.dataSource.query<Array<{ count: string }>>(
        `SELECT count(*) AS count FROM messages.messages WHERE account_id = $1`,
        [sender.accountId],
      );
      expect(count?.count).toBe('2');
      const ofAccount = (type: string) =>
        collected(
          app.events,
          (event) => event.type === type && event.data.account_id === sender.accountId,
          type === 'message.reception' ? 2 : 1,
        );
      const [suppressed] = await ofAccount('message.suppressed');
      const receptions = await ofAccount('message.reception');
      expect(suppressed?.value).toEqual({
        id: suppressed?.msgId,
        type: 'message.suppressed',
        timestamp: receptions[0]?.value.timestamp,
        data: {
          account_id: sender.accountId,
          event: 'on_suppressed',
          from: sender.from,
          recipient: 'Blocked@Recipient.test',
          subject: 'Hello',
          message_id_header: `<${suppressed?.value.data.id}@${sender.domain.domain}>`,
          id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
          is_bot: false,
        },
      });
      expect(webhookPayloads.eventViolations(suppressed.value)).toEqual([]);
      expect(receptions.map((event) => event.value.data.recipient)).toEqual([
        'ok-1@recipient.test',
        'ok-2@recipient.test',
      ]);
      // The send's receptions travel in one stream message, which usage counts them from.
      expect(new Set(receptions.map((event) => event.batch?.msgId)).size).toBe(1);
      expect(receptions[0]?.batch).toEqual({ msgId: expect.any(String) as unknown, size: 2 });
      // now() is the transaction's start: the events and the job were written together.
      const [outboxTransactions] = await app.dataSource.query<
        Array<{ rows: string; starts: string }>
      >(
        `SELECT count(*) AS rows, count(DISTINCT created_at) AS starts FROM messages.outbox
          WHERE payload::text LIKE '%' || $1 || '%'`,
        [sender.accountId],
      );
      // The reception batch, the suppressed recipient's event and the job: no send_receptions.
      expect(outboxTransactions).toEqual({ rows: '3', starts: '1' });
    });

    it('publishes message.suppressed when every recipient is suppressed, and stores no message', async () => {
      const sender = await newSender(app);
      await suppress(app, sender.accountId, 'gone@recipient.test', 'complaint');

      const result = await send(
        app,
        sender,
        messageBody(sender, { recipients: [{ email: 'gone@recipient.test' }] }),
      );

      expect(result.data.map((entry) => [entry.id, entry.status])).toEqual([[null, 'error']]);
      const [event] = await collected(
        app.events,
        (candidate) => candidate.data.account_id === sender.accountId,
        1,
      );
      expect(event?.value).toMatchObject({
        type: 'message.suppressed',
        data: { event: 'on_suppressed', recipient: 'gone@recipient.test', is_bot: false },
      });
      expect(webhookPayloads.eventViolations(event.value)).toEqual([]);
      const [count] = await app.dataSource.query<Array<{ count: string }>>(
        `SELECT count(*) AS count FROM messages.messages WHERE account_id = $1`,
        [sender.accountId],
      );
      expect(count?.count).toBe('0');
    });

    it("stores the account's tracking and retention defaults unless the request overrides them", async () => {
      const { account } = await createAccount(app);
      await app.rpc.request(AccountsSubjects.updateAccount, {
        account_id: account.id,
        changes: {
          track_opens: false,
          track_clicks: true,
          message_metadata_retention: 5,
          message_data_retention: 2,
        },
      });
      const domain = await createDomain(app, account.id);
      const sender = { accountId: account.id, domain, from: `news@${domain.domain}` };

      const defaults = await send(app, sender, messageBody(sender));
      const overridden = await send(
        app,
        sender,
        messageBody(sender, {
          tracking: { open: true, click: null },
          retention: { metadata: 10, data: 0 },
          sandbox: true,
          sandbox_result: 'bounce',
        }),
      );

      const [first, second] = await storedMessages(app, [
        uuidOf(defaults.data[0]?.id ?? null),
        uuidOf(overridden.data[0]?.id ?? null),
      ]);
      if (!first || !second) throw new Error('both messages must be stored');
      expect(first).toMatchObject({
        track_opens: false,
        track_clicks: true,
        retention_metadata_days: 5,
        retention_data_days: 2,
        sandbox: false,
        sandbox_result: null,
      });
      const day = 86_400_000;
      expect(first.retain_until.getTime() - first.created_at.getTime()).toBe(5 * day);
      expect(first.purge_at.getTime() - first.created_at.getTime()).toBe(2 * day);
      expect(second).toMatchObject({
        track_opens: true,
        track_clicks: true,
        retention_metadata_days: 10,
        retention_data_days: 0,
        sandbox: true,
        sandbox_result: 'bounce',
      });
      expect(second.purge_at).toEqual(second.retain_until);
    });

    it('renders templates per recipient, recipient substitutions over global ones', async () => {
      const sender = await newSender(app);

      const result = await send(
        app,
        sender,
        messageBody(sender, {
          subject: 'Hi {{ name }} from {{ team }}',
          text_content: 'Order {{ order }} for {{ name }}',
          html_content: '<p>{{ name }}</p>',
          substitutions: { name: 'friend', team: 'Acme', order: 1 },
          recipients: [
            { email: 'ann@recipient.test', substitutions: { name: 'Ann', order: 7 } },
            { email: 'bob@recipient.test' },
            { email: 'eve@recipient.test', substitutions: { name: '<b>Eve</b>' } },
          ],
        }),
      );

      const records = await Promise.all(
        result.data.map((entry) => getMessage(app, sender.accountId, entry.id ?? '')),
      );
      expect(records.map((record) => record.subject)).toEqual([
        'Hi Ann from Acme',
        'Hi friend from Acme',
        'Hi <b>Eve</b> from Acme',
      ]);
      const parts = records.map((record) =>
        Object.fromEntries(
          (record.content_parsed?.parts ?? []).map((part) => [part.content_type, part.content]),
        ),
      );
      expect(parts[0]?.['text/plain']).toContain('Order 7 for Ann');
      expect(parts[1]?.['text/plain']).toContain('Order 1 for friend');
      // HTML is autoescaped.
      expect(parts[2]?.['text/html']).toContain('&lt;b&gt;Eve&lt;');
      expect(parts[2]?.['text/html']).not.toContain('<b>');
      expect(result.data[0]?.recipient).toEqual({
        email: 'ann@recipient.test',
        name: '',
        substitutions: { name: 'Ann', order: 7 },
      });
    });

    it('refuses a template that does not render, naming the field', async () => {
      const sender = await newSender(app);

      await expect(
        send(
          app,
          sender,
          messageBody(sender, {
            html_content: '<p>{% if %}</p>',
            substitutions: { a: 1 },
          }),
        ),
      ).rejects.toMatchObject({
        code: MessagesErrorCode.TemplateError,
        message: expect.stringContaining('html') as unknown,
      });
    });

    it('keeps accounts apart: another account can neither send from the domain nor see the message', async () => {
      const sender = await newSender(app);
      const other = await createAccount(app);
      const result = await send(app, sender, messageBody(sender));
      const header = result.data[0]?.id ?? '';

      await expect(
        send(app, { ...sender, accountId: other.account.id }, messageBody(sender)),
      ).rejects.toMatchObject({ code: MessagesErrorCode.SenderDomainNotOwned });
      for (const subject of [MessagesSubjects.getMessage, MessagesSubjects.cancelMessage]) {
        await expect(
          app.rpc.request(subject, { account_id: other.account.id, message_id: header }),
        ).rejects.toMatchObject({ code: MessagesErrorCode.MessageNotFound });
      }
      const page = await app.rpc.request(MessagesSubjects.listMessages, {
        account_id: other.account.id,
        page: { limit: 100 },
        filters: {},
      });
      expect(page.data).toEqual([]);
    });
  });
}
