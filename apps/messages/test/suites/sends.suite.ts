import { randomUUID } from 'node:crypto';

import { type DeliveryView, MessagesSubjects } from '@envoi/contracts-messages';
import { simpleParser } from 'mailparser';

import { MessagesRepository } from '../../src/messages/messages.repository';
import { RetentionRepository } from '../../src/retention/retention.repository';
import { RetentionPurgeService } from '../../src/retention/retention-purge.service';
import { contentRow, messageRow } from '../message-row-factory';
import {
  messageBody,
  type MessagesTestApp,
  newSender,
  send,
  TRACKING_TEST_BASE_URL,
  uuidOf,
} from '../messages-test-app';
import { getMessage, storedRaw } from './accept.suite';

function deliveryView(app: MessagesTestApp, messageId: string): Promise<DeliveryView> {
  return app.rpc.request(MessagesSubjects.deliveryView, { message_id: messageId });
}

/** The bytes a delivery worker gets for the message (inline). */
async function viewBytes(app: MessagesTestApp, messageId: string): Promise<Buffer | undefined> {
  const view = await deliveryView(app, messageId);
  return view.content_base64 === undefined ? undefined : Buffer.from(view.content_base64, 'base64');
}

const ATTACHMENT = Buffer.from([0, 1, 2, 250, 251, 252, 13, 10, 13]);

/**
 * Each send stored once, its messages composed when read: what delivery gets is what GET shows,
 * every time; messages stored with their raw content before still read back as they were.
 */
export function sendsSuite(getApp: () => MessagesTestApp): void {
  describe('messages service: sends stored once, messages composed when read', () => {
    let app: MessagesTestApp;

    beforeAll(() => {
      app = getApp();
    });

    it('gives delivery and GET the same bytes, call after call, rendered per recipient', async () => {
      const sender = await newSender(app);
      const result = await send(
        app,
        sender,
        messageBody(sender, {
          recipients: [
            { email: 'ann@recipient.test', name: 'Ann', substitutions: { first: 'Ann' } },
            { email: 'bob@recipient.test', substitutions: { first: 'Bob', extra: { k: 2 } } },
          ],
          substitutions: { first: 'friend', shop: 'Shop' },
          subject: 'Hi {{ first }} from {{ shop }}',
          text_content: 'Hello {{ first }}',
          html_content: '<p>Hello {{ first }}</p><a href="https://example.com/x">x</a></body>',
          attachments: [
            {
              file_name: 'bytes.bin',
              content_type: 'application/octet-stream',
              data: ATTACHMENT.toString('base64'),
              base64: true,
            },
          ],
          headers: { 'X-Zeta': 'z', 'X-Alpha': 'a' },
          tracking: { open: true, click: true },
        }),
      );
      const ids = result.data.map((entry) => uuidOf(entry.id));
      expect(ids).toHaveLength(2);

      const subjects: string[] = [];
      for (const id of ids) {
        const first = await viewBytes(app, id);
        const again = await viewBytes(app, id);
        expect(first).toBeDefined();
        expect(again?.equals(first ?? Buffer.alloc(0))).toBe(true);
        const record = await getMessage(app, sender.accountId, id);
        expect(record.content).toBe(first?.toString('utf8'));
        const parsed = await simpleParser(first ?? Buffer.alloc(0));
        subjects.push(parsed.subject ?? '');
        expect(parsed.attachments[0]?.content.equals(ATTACHMENT)).toBe(true);
        const raw = first?.toString('utf8') ?? '';
        expect(raw.indexOf('X-Zeta: z')).toBeGreaterThanOrEqual(0);
        expect(raw.indexOf('X-Zeta: z')).toBeLessThan(raw.indexOf('X-Alpha: a'));
      }
      expect(subjects).toEqual(['Hi Ann from Shop', 'Hi Bob from Shop']);
      // One send row and one attachment row for both messages.
      const [stored] = await app.dataSource.query<Array<{ sends: number; attachments: number }>>(
        `SELECT count(DISTINCT m.send_id)::int AS sends,
                (SELECT count(*)::int FROM messages.send_attachments a
                  WHERE a.send_id = min(m.send_id::text)::uuid) AS attachments
           FROM messages.messages m WHERE m.id = ANY($1)`,
        [ids],
      );
      expect(stored).toEqual({ sends: 1, attachments: 1 });
    });

    it("sends a click on a templated link to that recipient's URL", async () => {
      const sender = await newSender(app);
      const result = await send(
        app,
        sender,
        messageBody(sender, {
          recipients: [
            { email: 'c1@recipient.test', substitutions: { user: 'one' } },
            { email: 'c2@recipient.test', substitutions: { user: 'two' } },
          ],
          html_content: '<a href="https://example.com/u/{{ user }}?a=1&amp;b=2">me</a>',
          tracking: { click: true },
        }),
      );
      const base = TRACKING_TEST_BASE_URL.replace(/[.]/g, '\\.');
      const urls: string[] = [];
      for (const entry of result.data) {
        const parsed = await simpleParser(
          (await storedRaw(app, uuidOf(entry.id))) ?? Buffer.alloc(0),
        );
        const html = typeof parsed.html === 'string' ? parsed.html : '';
        const token = new RegExp(`href="${base}/t/c/([A-Za-z0-9_-]+)"`).exec(html)?.[1] ?? '';
        const { url } = await app.rpc.request(MessagesSubjects.trackClick, { token });
        urls.push(url);
      }
      expect(urls).toEqual([
        'https://example.com/u/one?a=1&b=2',
        'https://example.com/u/two?a=1&b=2',
      ]);
    });

    it('reads back and delivers a message stored with its raw content, unchanged', async () => {
      const id = randomUUID();
      const raw = Buffer.from(
        'Subject: stored before\r\nTo: a@b.test\r\n\r\nbytes \xff as stored\r\n',
        'latin1',
      );
      const row = messageRow(id, {
        status: 'Received',
        retentionDataDays: 30,
        retainUntil: new Date(Date.now() + 86_400_000),
        contentPurgedAt: null,
        substitutions: null,
      });
      const messages = app.app.get(MessagesRepository);
      await app.dataSource.transaction(async (manager) => {
        await messages.insertMessages([row], manager);
        await messages.insertContents([contentRow(id, raw)], manager);
      });

      expect((await viewBytes(app, id))?.equals(raw)).toBe(true);
      const record = await getMessage(app, row.accountId, id);
      expect(record.content).toBe(raw.toString('utf8'));
      expect(record.content_parsed?.headers['Subject']).toEqual(['stored before']);
    });

    it('empties a send at data retention 0 once none of its messages can be read', async () => {
      const sender = await newSender(app);
      const result = await send(
        app,
        sender,
        messageBody(sender, {
          recipients: [{ email: 'r1@recipient.test' }, { email: 'r2@recipient.test' }],
          attachments: [
            { file_name: 'a.txt', content_type: 'text/plain', data: 'kept until the end' },
          ],
          retention: { metadata: 3, data: 0 },
        }),
      );
      const [first, second] = result.data.map((entry) => uuidOf(entry.id));
      if (!first || !second) throw new Error('two messages were expected');
      const retention = app.app.get(RetentionRepository);
      const sendState = async () => {
        const [state] = await app.dataSource.query<
          Array<{ purged: boolean; subject: string | null; attachments: number }>
        >(
          `SELECT s.purged_at IS NOT NULL AS purged, s.subject,
                  (SELECT count(*)::int FROM messages.send_attachments a WHERE a.send_id = s.id)
                    AS attachments
             FROM messages.sends s
            WHERE s.id = (SELECT send_id FROM messages.messages WHERE id = $1)`,
          [first],
        );
        return state;
      };

      await app.dataSource.transaction((manager) => retention.purgeContentsNow([first], manager));
      expect(await storedRaw(app, first)).toBeNull();
      expect(await storedRaw(app, second)).not.toBeNull();
      expect(await sendState()).toEqual({ purged: false, subject: 'Hello', attachments: 1 });

      await app.dataSource.transaction((manager) => retention.purgeContentsNow([second], manager));
      expect(await storedRaw(app, second)).toBeNull();
      expect(await sendState()).toEqual({ purged: true, subject: null, attachments: 0 });
      const view = await deliveryView(app, second);
      expect(view.content_base64).toBeUndefined();
      expect(view.content_download).toBeUndefined();
      await expect(getMessage(app, sender.accountId, second)).resolves.toMatchObject({
        content: null,
        content_parsed: null,
      });
    });

    it('deletes a send, its attachments and its messages when metadata retention ends', async () => {
      const sender = await newSender(app);
      const result = await send(
        app,
        sender,
        messageBody(sender, {
          recipients: [{ email: 'm1@recipient.test' }, { email: 'm2@recipient.test' }],
          attachments: [{ file_name: 'a.txt', content_type: 'text/plain', data: 'attached' }],
        }),
      );
      const ids = result.data.map((entry) => uuidOf(entry.id));
      const [{ send_id: sendId } = { send_id: '' }] = await app.dataSource.query<
        Array<{ send_id: string }>
      >('SELECT send_id FROM messages.messages WHERE id = $1', [ids[0]]);
      await app.dataSource.query(
        `UPDATE messages.sends SET retain_until = now() - interval '1 second' WHERE id = $1`,
        [sendId],
      );

      await app.app.get(RetentionPurgeService).purge();

      const [left] = await app.dataSource.query<
        Array<{ sends: number; attachments: number; messages: number }>
      >(
        `SELECT (SELECT count(*)::int FROM messages.sends WHERE id = $1) AS sends,
                (SELECT count(*)::int FROM messages.send_attachments WHERE send_id = $1)
                  AS attachments,
                (SELECT count(*)::int FROM messages.messages WHERE id = ANY($2)) AS messages`,
        [sendId, ids],
      );
      expect(left).toEqual({ sends: 0, attachments: 0, messages: 0 });
    });
  });
}
