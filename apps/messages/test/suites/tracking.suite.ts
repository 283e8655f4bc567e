import {
  type MessageClickedEvent,
  type MessageOpenedEvent,
  MessagesErrorCode,
  MessagesStreamSubjects,
  MessagesSubjects,
} from '@envoi/contracts-messages';
import { pollUntil, WebhookPayloadValidator } from '@envoi/shared-testing';
import { simpleParser } from 'mailparser';

import {
  messageBody,
  type MessagesTestApp,
  newSender,
  send,
  TRACKING_TEST_BASE_URL,
  uuidOf,
} from '../messages-test-app';
import { storedRaw } from './accept.suite';

const HTML =
  '<html><body><a href="https://example.com/a?x=1&amp;y=2">a</a> <a href="http://example.com/b">b</a></body></html>';

export function trackingSuite(getApp: () => MessagesTestApp): void {
  describe('messages service: open and click tracking', () => {
    let app: MessagesTestApp;

    beforeAll(() => {
      app = getApp();
    });

    /** Accepts a tracked message; its id and the tokens of its pixel and links, as stored. */
    async function tracked(tracking = { open: true, click: true }) {
      const sender = await newSender(app);
      const result = await send(app, sender, messageBody(sender, { html_content: HTML, tracking }));
      const id = uuidOf(result.data[0]?.id ?? null);
      const parsed = await simpleParser((await storedRaw(app, id)) ?? Buffer.alloc(0));
      const html = typeof parsed.html === 'string' ? parsed.html : '';
      const base = TRACKING_TEST_BASE_URL.replace(/[.]/g, '\\.');
      const open = new RegExp(`src="${base}/t/o/([A-Za-z0-9_-]+)"`).exec(html)?.[1];
      const clicks = [...html.matchAll(new RegExp(`href="${base}/t/c/([A-Za-z0-9_-]+)"`, 'g'))].map(
        (match) => match[1] ?? '',
      );
      return { sender, id, html, open, clicks };
    }

    async function counts(id: string) {
      const [row] = await app.dataSource.query<Array<{ open_count: number; click_count: number }>>(
        'SELECT open_count, click_count FROM messages.messages WHERE id = $1',
        [id],
      );
      return row;
    }

    it('stores the HTML with a pixel and rewritten links, and the links they stand for', async () => {
      const { id, open, clicks } = await tracked();

      expect(open).toBeDefined();
      expect(clicks).toHaveLength(2);
      // Not templated: stored once for the send.
      const links = await app.dataSource.query<Array<{ position: number; url: string }>>(
        `SELECT position, url FROM messages.send_links
          WHERE send_id = (SELECT send_id FROM messages.messages WHERE id = $1) ORDER BY position`,
        [id],
      );
      expect(links).toEqual([
        { position: 0, url: 'https://example.com/a?x=1&y=2' },
        { position: 1, url: 'http://example.com/b' },
      ]);
    });

    it('counts opens and clicks and publishes their events, a click going to its stored URL', async () => {
      const { sender, id, open, clicks } = await tracked();
      const visitor = { user_agent: 'Mozilla/5.0 (test)', ip: '192.0.2.7' };

      await expect(
        app.rpc.request(MessagesSubjects.trackOpen, { token: open ?? '', ...visitor }),
      ).resolves.toEqual({ tracked: true });
      await expect(
        app.rpc.request(MessagesSubjects.trackClick, { token: clicks[1] ?? '', ...visitor }),
      ).resolves.toEqual({ url: 'http://example.com/b' });

      expect(await counts(id)).toEqual({ open_count: 1, click_count: 1 });
      const events = await pollUntil(
        () =>
          app.events
            .of((event) => (event as { data: { id?: string } }).data.id === id)
            .map((entry) => entry.value as unknown as MessageOpenedEvent | MessageClickedEvent)
            .filter((event) => event.type !== ('message.reception' as string)),
        (found) => found.length === 2,
        { what: 'the opened and clicked events' },
      );
      const common = {
        account_id: sender.accountId,
        from: sender.from,
        id,
        user_agent: 'Mozilla/5.0 (test)',
        ip: '192.0.2.7',
        is_bot: false,
      };
      expect(events.find((event) => event.type === 'message.opened')?.data).toMatchObject({
        ...common,
        event: 'on_opened',
      });
      expect(events.find((event) => event.type === 'message.clicked')?.data).toMatchObject({
        ...common,
        event: 'on_clicked',
        url: 'http://example.com/b',
      });
      for (const event of events) {
        expect(new WebhookPayloadValidator().eventViolations(event)).toEqual([]);
      }
    });

    it('refuses altered tokens, a token of the other kind, and tokens of deleted messages', async () => {
      const { id, open, clicks } = await tracked();
      const click = clicks[0] ?? '';
      const altered = `${click.slice(0, 10)}${click[10] === 'A' ? 'B' : 'A'}${click.slice(11)}`;
      const notFound = { code: MessagesErrorCode.TrackingNotFound };

      await expect(
        app.rpc.request(MessagesSubjects.trackClick, { token: altered }),
      ).rejects.toMatchObject(notFound);
      await expect(
        app.rpc.request(MessagesSubjects.trackClick, { token: open ?? '' }),
      ).rejects.toMatchObject(notFound);
      await expect(
        app.rpc.request(MessagesSubjects.trackOpen, { token: click }),
      ).rejects.toMatchObject(notFound);
      await app.dataSource.query('DELETE FROM messages.messages WHERE id = $1', [id]);
      await expect(
        app.rpc.request(MessagesSubjects.trackClick, { token: click }),
      ).rejects.toMatchObject(notFound);
      await expect(
        app.rpc.request(MessagesSubjects.trackOpen, { token: open ?? '' }),
      ).rejects.toMatchObject(notFound);
    });

    it('keeps counting past the event cap without publishing more events', async () => {
      const { id, open } = await tracked({ open: true, click: false });
      const cap = app.config.TRACKING_EVENTS_PER_MESSAGE;

      for (let hit = 0; hit < cap + 3; hit++) {
        await app.rpc.request(MessagesSubjects.trackOpen, { token: open ?? '' });
      }

      expect((await counts(id))?.open_count).toBe(cap + 3);
      const opened = () =>
        app.events.of((event) => {
          const value = event as unknown as MessageOpenedEvent;
          return value.type === 'message.opened' && value.data.id === id;
        });
      await pollUntil(opened, (found) => found.length >= cap, { what: 'the capped open events' });
      // The relay marks rows published once the stream acknowledged them, after they arrived.
      const unpublished = async () => {
        const [{ pending } = { pending: '0' }] = await app.dataSource.query<
          Array<{ pending: string }>
        >(
          `SELECT count(*) AS pending FROM messages.outbox
           WHERE subject = $1 AND published_at IS NULL`,
          [MessagesStreamSubjects.opened.name],
        );
        return Number(pending);
      };
      await pollUntil(unpublished, (pending) => pending === 0, {
        what: 'no open event left to publish',
      });
      expect(opened()).toHaveLength(cap);
    });

    it('tracks nothing when tracking is off, and no clicks in text', async () => {
      const { open, clicks, html } = await tracked({ open: false, click: false });

      expect(open).toBeUndefined();
      expect(clicks).toEqual([]);
      expect(html).toContain('href="https://example.com/a?x=1&amp;y=2"');
    });
  });
}
