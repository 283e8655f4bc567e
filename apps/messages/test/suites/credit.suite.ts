import { AccountsSubjects } from '@envoi/contracts-accounts';
import type { CreateMessageResult } from '@envoi/contracts-messages';

import { creditUsedUp } from '../../src/credit/credit-reservations.repository';
import {
  createAccount,
  createDomain,
  messageBody,
  MESSAGES_TEST_ENV,
  type MessagesTestApp,
  newSender,
  send,
  type Sender,
} from '../messages-test-app';

/** A sub-account with this monthly credit and a verified domain. */
export async function cappedSender(app: MessagesTestApp, monthlyCredit: number): Promise<Sender> {
  const { account: parent } = await createAccount(app);
  const child = await app.rpc.request(AccountsSubjects.createSubAccount, {
    account_id: parent.id,
    sub_account: { name: 'Capped', website: 'capped.example.com', monthly_credit: monthlyCredit },
  });
  const domain = await createDomain(app, child.id);
  return { accountId: child.id, domain, from: `hello@${domain.domain}` };
}

async function storedMessages(app: MessagesTestApp, accountId: string): Promise<number> {
  const rows = await app.dataSource.query<Array<{ count: number }>>(
    'SELECT count(*)::int AS count FROM messages.messages WHERE account_id = $1',
    [accountId],
  );
  return rows[0]?.count ?? 0;
}

function statuses(results: readonly CreateMessageResult[]): string[] {
  return results.flatMap((result) => result.data.map((entry) => entry.status));
}

export function creditSuite(getApp: () => MessagesTestApp): void {
  describe('messages service: monthly credit', () => {
    let app: MessagesTestApp;

    beforeAll(() => {
      app = getApp();
    });

    it('accepts exactly the credit under 20 concurrent sends, and tells the others why', async () => {
      const sender = await cappedSender(app, 5);

      const results = await Promise.all(
        Array.from({ length: 20 }, () => send(app, sender, messageBody(sender))),
      );

      const all = results.flatMap((result) => result.data);
      expect(all.filter((entry) => entry.status === 'queued')).toHaveLength(5);
      const refused = all.filter((entry) => entry.status === 'error');
      expect(refused).toHaveLength(15);
      for (const entry of refused) {
        expect(entry).toMatchObject({ id: null, error: creditUsedUp(5) });
      }
      expect(await storedMessages(app, sender.accountId)).toBe(5);
    });

    it('accepts exactly the credit with a second messages replica sharing the sends', async () => {
      const replica = await app.platform.startService(
        'messages',
        app.platform.env({ ...MESSAGES_TEST_ENV, LOG_LEVEL: 'info' }),
      );
      try {
        const sender = await cappedSender(app, 5);

        // Both replicas are in the service's queue group: NATS spreads the requests over them.
        const results = await Promise.all(
          Array.from({ length: 20 }, () => send(app, sender, messageBody(sender))),
        );

        const all = statuses(results);
        expect(all.filter((status) => status === 'queued')).toHaveLength(5);
        expect(all.filter((status) => status === 'error')).toHaveLength(15);
        expect(await storedMessages(app, sender.accountId)).toBe(5);
      } finally {
        await replica.stop();
      }
    });

    it('splits a send at the credit left: the first recipients in, the rest refused', async () => {
      const sender = await cappedSender(app, 4);
      const three = () =>
        messageBody(sender, {
          recipients: ['a', 'b', 'c'].map((name) => ({ email: `${name}@recipient.test` })),
        });

      const first = await send(app, sender, three());
      const second = await send(app, sender, three());

      expect(statuses([first])).toEqual(['queued', 'queued', 'queued']);
      expect(statuses([second])).toEqual(['queued', 'error', 'error']);
      expect(second.data[1]?.recipient.email).toBe('b@recipient.test');
      expect(await storedMessages(app, sender.accountId)).toBe(4);
    });

    it('keeps no credit for an uncapped account', async () => {
      const sender = await newSender(app);

      const results = await Promise.all(
        Array.from({ length: 8 }, () => send(app, sender, messageBody(sender))),
      );

      expect(statuses(results).every((status) => status === 'queued')).toBe(true);
      const rows = await app.dataSource.query<unknown[]>(
        'SELECT 1 FROM messages.credit_usage WHERE account_id = $1',
        [sender.accountId],
      );
      expect(rows).toHaveLength(0);
    });
  });
}
