import {
  type CreateConversationBody,
  type CreateMessageResult,
  deliveryJobMessageIds,
  MessagesErrorCode,
  MessagesSubjects,
} from '@envoi/contracts-messages';

import {
  collected,
  type MessagesTestApp,
  newSender,
  type Sender,
  suppress,
  uuidOf,
} from '../messages-test-app';
import { getMessage, headerOf, storedMessages } from './accept.suite';

function converse(
  app: MessagesTestApp,
  sender: Sender,
  body: Omit<CreateConversationBody, 'from' | 'subject'> & Partial<CreateConversationBody>,
): Promise<CreateMessageResult> {
  return app.rpc.request(MessagesSubjects.createConversation, {
    account_id: sender.accountId,
    api: 'v2',
    body: { from: { email: sender.from }, subject: 'Meeting', text_content: 'Agenda', ...body },
  });
}

export function conversationSuite(getApp: () => MessagesTestApp): void {
  describe('messages service: conversation messages', () => {
    let app: MessagesTestApp;

    beforeAll(() => {
      app = getApp();
    });

    it('sends one message to to, cc and bcc together; bcc only on the envelope', async () => {
      const sender = await newSender(app);

      const result = await converse(app, sender, {
        to: [{ email: 'ann@recipient.test', name: 'Ann' }, { email: 'bob@recipient.test' }],
        cc: [{ email: 'carol@recipient.test' }],
        bcc: [{ email: 'Dave@Recipient.test' }],
      });

      const header = result.data[0]?.id ?? null;
      expect(result.data.map((entry) => [entry.recipient.email, entry.id, entry.status])).toEqual([
        ['ann@recipient.test', header, 'queued'],
        ['bob@recipient.test', header, 'queued'],
        ['carol@recipient.test', header, 'queued'],
        ['Dave@Recipient.test', header, 'queued'],
      ]);
      const id = uuidOf(header);
      const [row] = await storedMessages(app, [id]);
      expect(row).toMatchObject({
        kind: 'conversation',
        recipient: 'ann@recipient.test',
        envelope_recipients: [
          'ann@recipient.test',
          'bob@recipient.test',
          'carol@recipient.test',
          'dave@recipient.test',
        ],
      });
      const record = await getMessage(app, sender.accountId, id);
      expect(headerOf(record, 'to')).toEqual(['Ann <ann@recipient.test>, bob@recipient.test']);
      expect(headerOf(record, 'cc')).toEqual(['carol@recipient.test']);
      expect(headerOf(record, 'bcc')).toEqual([]);
      expect(record.content).not.toContain('dave@');
      await collected(app.jobs, (job) => deliveryJobMessageIds(job).includes(id), 1);
    });

    it('leaves suppressed addresses off the envelope; all suppressed: nothing is sent', async () => {
      const sender = await newSender(app);
      await suppress(app, sender.accountId, 'gone@recipient.test', 'complaint');

      const some = await converse(app, sender, {
        to: [{ email: 'here@recipient.test' }],
        cc: [{ email: 'gone@recipient.test' }],
      });
      const none = await converse(app, sender, { to: [{ email: 'gone@recipient.test' }] });

      expect(some.data.map((entry) => [entry.status, entry.error])).toEqual([
        ['queued', null],
        ['error', 'recipient is suppressed: complaint'],
      ]);
      const [row] = await storedMessages(app, [uuidOf(some.data[0]?.id ?? null)]);
      expect(row?.envelope_recipients).toEqual(['here@recipient.test']);
      expect(none.data).toEqual([
        {
          object: 'message',
          id: null,
          recipient: { email: 'gone@recipient.test', name: '' },
          status: 'error',
          error: 'recipient is suppressed: complaint',
        },
      ]);
    });

    it('refuses more than 50 addresses in all', async () => {
      const sender = await newSender(app);
      const addresses = (prefix: string, count: number) =>
        Array.from({ length: count }, (_, n) => ({ email: `${prefix}${n}@recipient.test` }));

      await expect(
        converse(app, sender, { to: addresses('to', 30), cc: addresses('cc', 21) }),
      ).rejects.toMatchObject({ code: MessagesErrorCode.InvalidMessage });
    });
  });
}
