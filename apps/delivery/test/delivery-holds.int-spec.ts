import { AccountsSubjects } from '@envoi/contracts-accounts';
import { pollUntil } from '@envoi/shared-testing';

import {
  attemptsOf,
  deliveryJobsInfo,
  type DeliveryTestApp,
  newSender,
  publishChunkJob,
  publishJob,
  recipientDomain,
  registerMessage,
  startDeliveryTestApp,
  unique,
} from './delivery-test-app';

/**
 * Mail of accounts that are not active is held, not lost: the delivery service (in this process)
 * with the real accounts service (statuses, operator suspensions), real domains service, DNS
 * server and SMTP sink on loopback. Jobs come back every DELIVERY_SUSPENDED_RECHECK_MS (300 ms).
 */
describe('delivery service: holds of non-active accounts', () => {
  let app: DeliveryTestApp | undefined;

  beforeAll(async () => {
    app = await startDeliveryTestApp();
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  }, 60_000);

  const get = (): DeliveryTestApp => {
    if (!app) throw new Error('the delivery service did not start');
    return app;
  };

  /** Waits until the workers were handed the DELIVERY jobs `times` more times than `since`. */
  async function handedOut(since: number, times: number): Promise<void> {
    await pollUntil(
      () => deliveryJobsInfo(get()),
      (info) => info.delivered.consumer_seq >= since + times,
      { what: `${times} more deliveries of jobs`, timeoutMs: 15_000 },
    );
  }

  it("holds a child's mail while its parent is suspended, then delivers it on its first attempt", async () => {
    const app = get();
    const parent = await app.rpc.request(AccountsSubjects.createAccount, {
      name: 'Holding parent',
    });
    const child = await app.rpc.request(AccountsSubjects.createSubAccount, {
      account_id: parent.account.id,
      sub_account: { name: 'Held child', website: 'held.example.com' },
    });
    const sender = await newSender(app, child.id);
    const destination = recipientDomain(app);
    const single = registerMessage(app, sender, [`accept-${unique('h')}@${destination}`]);
    const chunked = [1, 2].map(() =>
      registerMessage(app, sender, [`accept-${unique('h')}@${destination}`]),
    );

    await expect(
      app.rpc.request(AccountsSubjects.suspendAccount, {
        account_id: parent.account.id,
        reason: 'unpaid invoices',
      }),
    ).resolves.toMatchObject({
      sub_accounts: [{ account_id: child.id, status: 'parent-suspended' }],
    });
    const before = (await deliveryJobsInfo(app)).delivered.consumer_seq;
    await publishJob(app, single);
    await publishChunkJob(app, chunked);

    // Each job handed back and taken again at least twice, and nothing sent or recorded.
    await handedOut(before, 6);
    for (const view of [single, ...chunked]) {
      expect(app.sink.receiptsFor(view.envelope_recipients[0] ?? '')).toHaveLength(0);
      expect(app.events.of(view.id)).toHaveLength(0);
      expect(await attemptsOf(app, view.id)).toHaveLength(0);
    }
    expect(app.views.singles).not.toContain(single.id);

    await app.rpc.request(AccountsSubjects.unsuspendAccount, { account_id: parent.account.id });

    for (const view of [single, ...chunked]) {
      const [event] = await app.events.waitFor(view.id, 1);
      expect(event).toMatchObject({
        type: 'message.delivered',
        data: { account_id: child.id, attempt: { attempt: 1, status: 'Delivered' } },
      });
      expect(app.sink.receiptsFor(view.envelope_recipients[0] ?? '')).toHaveLength(1);
    }
  });

  it('holds the mail of an account suspended by an operator until it is unsuspended', async () => {
    const app = get();
    const { account } = await app.rpc.request(AccountsSubjects.createAccount, { name: 'Own' });
    const sender = await newSender(app, account.id);
    const to = `accept-${unique('o')}@${recipientDomain(app)}`;
    const view = registerMessage(app, sender, [to]);
    await app.rpc.request(AccountsSubjects.suspendAccount, {
      account_id: account.id,
      reason: 'abuse',
    });
    const before = (await deliveryJobsInfo(app)).delivered.consumer_seq;
    await publishJob(app, view);
    await handedOut(before, 3);
    expect(app.sink.receiptsFor(to)).toHaveLength(0);

    await app.rpc.request(AccountsSubjects.unsuspendAccount, { account_id: account.id });
    await expect(app.events.waitFor(view.id, 1)).resolves.toEqual([
      expect.objectContaining({ type: 'message.delivered' }),
    ]);
    expect(app.sink.receiptsFor(to)).toHaveLength(1);
  });
});
