import type { PageRequest } from '@envoi/contracts-core';
import {
  type MessageFilters,
  MessagesErrorCode,
  MessagesSubjects,
  type MessageSummaryRecord,
} from '@envoi/contracts-messages';

import { RetentionPurgeService } from '../../src/retention/retention-purge.service';
import {
  createDomain,
  messageBody,
  type MessagesTestApp,
  newSender,
  send,
  type Sender,
  uuidOf,
} from '../messages-test-app';
import { getMessage, headerOf } from './accept.suite';

function list(
  app: MessagesTestApp,
  accountId: string,
  filters: MessageFilters = {},
  page: Partial<PageRequest> = {},
  domains?: string[],
) {
  return app.rpc.request(MessagesSubjects.listMessages, {
    account_id: accountId,
    filters,
    page: { limit: 100, ...page },
    ...(domains ? { domains } : {}),
  });
}

const subjects = (data: MessageSummaryRecord[]) => data.map((message) => message.subject);

export function readSuite(getApp: () => MessagesTestApp): void {
  describe('messages service: listing and reading', () => {
    let app: MessagesTestApp;

    beforeAll(() => {
      app = getApp();
    });

    /** Four messages from two domains of one account, oldest first. */
    async function fixture(): Promise<{ sender: Sender; other: Sender; headers: string[] }> {
      const sender = await newSender(app);
      const secondDomain = await createDomain(app, sender.accountId);
      const other = { ...sender, domain: secondDomain, from: `info@${secondDomain.domain}` };
      const headers: string[] = [];
      const bodies = [
        messageBody(sender, {
          subject: 'Invoice 100%',
          tags: ['billing'],
          recipients: [{ email: 'Ann@R.test' }],
        }),
        messageBody(sender, { subject: 'Password reset', tags: ['security', 'urgent'] }),
        messageBody(other, { subject: 'Your invoice_2', tags: ['billing', 'urgent'] }),
        messageBody(other, {
          subject: 'Later',
          schedule: { first_attempt: new Date(Date.now() + 3_600_000).toISOString() },
          recipients: [{ email: 'ann@r.test' }],
        }),
      ];
      for (const [n, body] of bodies.entries()) {
        const result = await send(app, n < 2 ? sender : other, body);
        headers.push(result.data[0]?.id ?? '');
      }
      return { sender, other, headers };
    }

    it('lists newest first with the contract fields', async () => {
      const { sender, headers } = await fixture();

      const page = await list(app, sender.accountId);

      expect(subjects(page.data)).toEqual([
        'Later',
        'Your invoice_2',
        'Password reset',
        'Invoice 100%',
      ]);
      expect(page.has_more).toBe(false);
      expect(page.data[3]).toEqual({
        object: 'message',
        id: uuidOf(headers[0] ?? ''),
        message_id: headers[0],
        created_at: expect.any(String) as unknown,
        updated_at: expect.any(String) as unknown,
        sent_at: null,
        delivered_at: null,
        retain_until: expect.any(String) as unknown,
        direction: 'outbound',
        is_bounce_notification: false,
        bounce_classification: '',
        delivery_attempts: [],
        subject: 'Invoice 100%',
        tags: ['billing'],
        sender: sender.from,
        recipient: 'Ann@R.test',
        status: 'Received',
        num_attempts: 0,
        click_count: 0,
        open_count: 0,
        reference_message_id: null,
        domain_id: sender.domain.id,
        account_id: sender.accountId,
      });
    });

    it('filters by every filter of the contract', async () => {
      const { sender, other, headers } = await fixture();
      const cases: Array<[MessageFilters, string[]]> = [
        [{ status: ['Scheduled'] }, ['Later']],
        [
          { status: ['Received', 'Scheduled'] },
          ['Later', 'Your invoice_2', 'Password reset', 'Invoice 100%'],
        ],
        [{ sender: other.from.toUpperCase() }, ['Later', 'Your invoice_2']],
        [{ recipient: 'ANN@r.test' }, ['Later', 'Invoice 100%']],
        [{ subject: 'invoice' }, ['Your invoice_2', 'Invoice 100%']],
        [{ subject: '100%' }, ['Invoice 100%']],
        [{ subject: 'e_2' }, ['Your invoice_2']],
        [{ message_id_header: headers[1] ?? '' }, ['Password reset']],
        [{ message_id_header: (headers[1] ?? '').slice(1, -1) }, ['Password reset']],
        [{ message_id_header: (headers[1] ?? '').toUpperCase() }, ['Password reset']],
        [{ message_id_header: (headers[1] ?? '').replace('@', '@other.') }, []],
        [{ message_id_header: '<not-an-id@r.test>' }, []],
        [{ tags: ['billing'] }, ['Your invoice_2', 'Invoice 100%']],
        [{ tags: ['security', 'billing'] }, ['Your invoice_2', 'Password reset', 'Invoice 100%']],
        [{ tags: ['nothing'] }, []],
      ];
      for (const [filters, expected] of cases) {
        const page = await list(app, sender.accountId, filters);
        expect([filters, subjects(page.data)]).toEqual([filters, expected]);
      }

      const all = await list(app, sender.accountId);
      const times = all.data.map((message) => message.created_at);
      const page = await list(app, sender.accountId, { from_time: times[2], to_time: times[0] });
      expect(subjects(page.data)).toEqual(['Your invoice_2', 'Password reset']);
      await expect(list(app, sender.accountId, { status: ['Sent'] })).rejects.toMatchObject({
        code: 'common.validation_failed',
      });
    });

    it('pages with after and before', async () => {
      const { sender } = await fixture();

      const first = await list(app, sender.accountId, {}, { limit: 3 });
      const second = await list(
        app,
        sender.accountId,
        {},
        { limit: 3, after: first.next_position },
      );
      const back = await list(
        app,
        sender.accountId,
        {},
        { limit: 3, before: second.previous_position },
      );

      expect([subjects(first.data), first.has_more]).toEqual([
        ['Later', 'Your invoice_2', 'Password reset'],
        true,
      ]);
      expect([subjects(second.data), second.has_more]).toEqual([['Invoice 100%'], false]);
      expect(subjects(back.data)).toEqual(subjects(first.data));
    });

    it("shows a domain-scoped caller only its domains' messages", async () => {
      const { sender, other, headers } = await fixture();

      const page = await list(app, sender.accountId, {}, {}, [other.domain.domain]);
      const none = await list(app, sender.accountId, {}, {}, []);

      expect(subjects(page.data)).toEqual(['Later', 'Your invoice_2']);
      expect(none.data).toEqual([]);
      await expect(
        app.rpc.request(MessagesSubjects.getMessage, {
          account_id: sender.accountId,
          message_id: headers[0] ?? '',
          domains: [other.domain.domain],
        }),
      ).rejects.toMatchObject({ code: MessagesErrorCode.MessageNotFound });
    });

    it('gets a message by either id form, with its raw and parsed content', async () => {
      const sender = await newSender(app);
      const result = await send(
        app,
        sender,
        messageBody(sender, {
          subject: 'With parts',
          text_content: 'Plain body',
          html_content: '<p>HTML body</p>',
          attachments: [{ file_name: 'note.txt', content_type: 'text/plain', data: 'attached' }],
        }),
      );
      const header = result.data[0]?.id ?? '';

      const byHeader = await getMessage(app, sender.accountId, header);
      const byUuid = await getMessage(app, sender.accountId, uuidOf(header));

      expect(byUuid).toEqual(byHeader);
      expect(byHeader.content).toMatch(new RegExp(`^Message-ID:\\s+${header}\r$`, 'm'));
      expect(headerOf(byHeader, 'message-id')).toEqual([header]);
      expect(byHeader.content).toContain('Subject: With parts');
      expect(byHeader.content_parsed?.parts.map((part) => part.content_type).sort()).toEqual([
        'text/html',
        'text/plain',
      ]);
      expect(byHeader.content_parsed?.attachments).toEqual([
        expect.objectContaining({
          filename: 'note.txt',
          content_type: 'text/plain',
          content: Buffer.from('attached').toString('base64'),
        }),
      ]);
      expect(headerOf(byHeader, 'subject')).toEqual(['With parts']);
      await expect(
        getMessage(app, sender.accountId, `<${uuidOf(header)}@other.example.test>`),
      ).rejects.toMatchObject({ code: MessagesErrorCode.MessageNotFound });
    });

    it('purges content when data retention ends, and the message when metadata retention ends', async () => {
      const sender = await newSender(app);
      const result = await send(app, sender, messageBody(sender));
      const id = uuidOf(result.data[0]?.id ?? '');
      const purger = app.app.get(RetentionPurgeService);

      await app.dataSource.query(
        `UPDATE messages.sends SET purge_at = now() - interval '1 second'
          WHERE id = (SELECT send_id FROM messages.messages WHERE id = $1)`,
        [id],
      );
      await purger.purge();
      await expect(getMessage(app, sender.accountId, id)).resolves.toMatchObject({
        subject: 'Hello',
        content: null,
        content_parsed: null,
      });

      await app.dataSource.query(
        `UPDATE messages.messages SET retain_until = now() - interval '1 second' WHERE id = $1`,
        [id],
      );
      await purger.purge();
      await expect(getMessage(app, sender.accountId, id)).rejects.toMatchObject({
        code: MessagesErrorCode.MessageNotFound,
      });
    });
  });
}
