import { CommonErrorCode } from '@envoi/contracts-core';
import { DomainsSubjects } from '@envoi/contracts-domains';
import { MessagesErrorCode } from '@envoi/contracts-messages';

import {
  createDomain,
  messageBody,
  type MessagesTestApp,
  newSender,
  publishRecords,
  send,
  uuidOf,
} from '../messages-test-app';
import { getMessage, headerOf, storedMessages } from './accept.suite';

const DAY = 86_400_000;

function inMs(offsetMs: number): string {
  return new Date(Date.now() + offsetMs).toISOString();
}

const invalid = (text: string) => ({
  code: MessagesErrorCode.InvalidMessage,
  message: expect.stringContaining(text) as unknown,
});

/** Spec 4.2, one test per rule. */
export function rulesSuite(getApp: () => MessagesTestApp): void {
  describe('messages service: the rules of createMessage (spec 4.2)', () => {
    let app: MessagesTestApp;

    beforeAll(() => {
      app = getApp();
    });

    it('rule 1: refuses a message with neither text nor HTML content', async () => {
      const sender = await newSender(app);
      const body = messageBody(sender, { text_content: '', html_content: '' });

      await expect(send(app, sender, body)).rejects.toMatchObject({
        code: MessagesErrorCode.InvalidMessage,
      });
      await expect(
        send(app, sender, { ...body, text_content: undefined, html_content: undefined }),
      ).rejects.toMatchObject({ code: MessagesErrorCode.InvalidMessage });
    });

    it('rule 2: refuses a sender domain the account does not own, or whose DNS is not valid', async () => {
      const sender = await newSender(app);
      const unverified = await createDomain(app, sender.accountId, { verified: false });
      const fromUnverified = { ...sender, from: `a@${unverified.domain}` };

      await expect(
        send(app, sender, messageBody({ ...sender, from: 'a@not-mine.example.test' })),
      ).rejects.toMatchObject({
        code: MessagesErrorCode.SenderDomainNotOwned,
        message: 'sender domain not-mine.example.test is not a domain of this account',
      });
      await expect(send(app, fromUnverified, messageBody(fromUnverified))).rejects.toMatchObject({
        code: MessagesErrorCode.SenderDomainNotVerified,
      });

      // Verifying it broadcasts the change: the cached refusal goes at once.
      publishRecords(app, unverified);
      const checked = await app.rpc.request(DomainsSubjects.checkDns, {
        account_id: sender.accountId,
        domain: unverified.domain,
      });
      expect(checked.dns_valid).toBe(true);
      const result = await pollUntilAccepted(app, fromUnverified);
      expect(result).toBe('queued');
    });

    it('rule 3: refuses retention outside 1..30 (metadata) and 0..30 (data)', async () => {
      const sender = await newSender(app);

      for (const retention of [{ metadata: 0 }, { metadata: 31 }, { data: -1 }, { data: 31 }]) {
        await expect(send(app, sender, messageBody(sender, { retention }))).rejects.toMatchObject({
          code: CommonErrorCode.ValidationFailed,
          message: expect.stringContaining('body.retention.') as unknown,
        });
      }
      await expect(
        send(app, sender, messageBody(sender, { retention: { metadata: 1, data: 30 } })),
      ).resolves.toMatchObject({ data: [{ status: 'queued' }] });
    });

    it('refuses a recipient the contract refuses, naming it, from any caller of the bus', async () => {
      const sender = await newSender(app);
      const recipients = [
        { email: 'fine@recipient.test', name: '' },
        { email: 'not-an-address', name: 'Bad' },
      ];

      await expect(send(app, sender, messageBody(sender, { recipients }))).rejects.toMatchObject({
        code: CommonErrorCode.ValidationFailed,
        message: 'body.recipients.1.email must be an email',
      });
      await expect(
        send(app, sender, messageBody(sender, { recipients: recipients.slice(0, 1) })),
      ).resolves.toMatchObject({
        data: [{ status: 'queued', recipient: { email: 'fine@recipient.test', name: '' } }],
      });
    });

    it('rule 4: refuses reply_to together with a reply-to header', async () => {
      const sender = await newSender(app);

      await expect(
        send(
          app,
          sender,
          messageBody(sender, {
            reply_to: { email: 'support@example.test' },
            headers: { 'Reply-To': 'other@example.test' },
          }),
        ),
      ).rejects.toMatchObject(invalid('reply-to'));
      await expect(
        send(app, sender, messageBody(sender, { headers: { 'Reply-To': 'other@example.test' } })),
      ).resolves.toMatchObject({ data: [{ status: 'queued' }] });
    });

    it('rule 5: ignores a message-id header and generates the id', async () => {
      const sender = await newSender(app);

      const result = await send(
        app,
        sender,
        messageBody(sender, {
          headers: { 'Message-ID': '<mine@example.test>', 'X-Campaign': 'c1' },
        }),
      );

      const header = result.data[0]?.id ?? '';
      const record = await getMessage(app, sender.accountId, header);
      expect(headerOf(record, 'message-id')).toEqual([header]);
      expect(headerOf(record, 'x-campaign')).toEqual(['c1']);
      expect(record.message_id).toBe(header);
      expect(record.id).toBe(uuidOf(header));
    });

    it('rule 7: sends no cc or bcc with createMessage (unknown fields are dropped)', async () => {
      const sender = await newSender(app);
      const body = {
        ...messageBody(sender, { recipients: [{ email: 'only@recipient.test' }] }),
        cc: [{ email: 'cc@recipient.test' }],
        bcc: [{ email: 'bcc@recipient.test' }],
      };

      const result = await send(app, sender, body);

      const [row] = await storedMessages(app, [uuidOf(result.data[0]?.id ?? null)]);
      expect(row?.envelope_recipients).toEqual(['only@recipient.test']);
      const record = await getMessage(app, sender.accountId, result.data[0]?.id ?? '');
      expect(headerOf(record, 'cc')).toEqual([]);
      expect(record.content).not.toContain('bcc@recipient.test');
    });

    it('rule 6: refuses a schedule outside its bounds', async () => {
      const sender = await newSender(app);
      const cases: Array<[Record<string, string>, string]> = [
        [{ first_attempt: inMs(-60_000) }, 'schedule.first_attempt must be in the future'],
        [{ first_attempt: inMs(7 * DAY + 60_000) }, 'within 7 days'],
        [{ expires: inMs(-60_000) }, 'schedule.expires must be in the future'],
        [{ expires: inMs(8 * DAY + 60_000) }, 'within 8 days'],
        [{ first_attempt: inMs(2 * DAY), expires: inMs(DAY) }, 'not be before'],
      ];
      for (const [schedule, text] of cases) {
        await expect(send(app, sender, messageBody(sender, { schedule }))).rejects.toMatchObject(
          invalid(text),
        );
      }
      await expect(
        send(app, sender, messageBody(sender, { schedule: { expires: inMs(8 * DAY - 60_000) } })),
      ).resolves.toMatchObject({ data: [{ status: 'queued', schedule: { expires: anyText } }] });
    });
  });
}

const anyText: unknown = expect.any(String);

/** The domain change broadcast is asynchronous: a few tries at most. */
async function pollUntilAccepted(
  app: MessagesTestApp,
  sender: Parameters<typeof send>[1],
): Promise<string> {
  let last: unknown;
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const result = await send(app, sender, messageBody(sender));
      return result.data[0]?.status ?? 'none';
    } catch (error) {
      last = error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw last;
}
