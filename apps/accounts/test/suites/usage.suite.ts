import { randomUUID } from 'node:crypto';

import { AccountsErrorCode, AccountsSubjects } from '@envoi/contracts-accounts';
import { EVENTS_STREAM } from '@envoi/contracts-core';
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import { CountedReceptionsPurgeService } from '../../src/usage/counted-receptions-purge.service';
import {
  RECEPTION_BATCH_COUNT_DURABLE,
  RECEPTION_COUNT_DURABLE,
} from '../../src/usage/reception-events.controller';
import type { AccountsTestApp } from '../accounts-test-app';

export function usageSuite(getApp: () => AccountsTestApp): void {
  describe('accounts service: reception usage', () => {
    let app: AccountsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    /**
     * Publishes a message.send_receptions event for these messages as the messages relay does;
     * answers its sequence.
     */
    async function publishReceptions(
      accountId: string,
      messageIds: readonly string[],
      timestamp = new Date().toISOString(),
      eventId = randomUUID(),
    ): Promise<number> {
      return publish(MessagesStreamSubjects.sendReceptions.name, {
        id: eventId,
        type: 'message.send_receptions',
        timestamp,
        data: { account_id: accountId, message_ids: messageIds },
      });
    }

    /** A message's `message.reception` event, as a send's commit writes it. */
    interface Reception {
      accountId: string;
      messageId: string;
      timestamp?: string;
    }

    /**
     * Publishes a message.reception_batch of these receptions (of one commit, several sends and
     * accounts alike) as the messages relay does; answers its sequence.
     */
    async function publishBatch(
      receptions: readonly Reception[],
      batchId = randomUUID(),
    ): Promise<number> {
      const events = receptions.map(({ accountId, messageId, timestamp }) => ({
        id: randomUUID(),
        type: 'message.reception',
        timestamp: timestamp ?? new Date().toISOString(),
        data: {
          account_id: accountId,
          event: 'on_reception',
          from: 'sender@usage.example.com',
          recipient: 'someone@example.net',
          subject: 'Hello',
          message_id_header: `<${messageId}@usage.example.com>`,
          id: messageId,
          is_bot: false,
        },
      }));
      return publish(MessagesStreamSubjects.receptionBatch.name, {
        id: batchId,
        type: 'message.reception_batch',
        timestamp: events[0]?.timestamp,
        data: { account_id: receptions[0]?.accountId, events },
      });
    }

    async function publish(
      subject: string,
      event: { id: string; type: string; timestamp: unknown; data: unknown },
    ): Promise<number> {
      const ack = await app.connection
        .jetstream()
        .publish(subject, new TextEncoder().encode(JSON.stringify(event)), { msgID: event.id });
      return ack.seq;
    }

    const publishReception = (accountId: string, messageId: string, timestamp?: string) =>
      publishReceptions(accountId, [messageId], timestamp);

    async function consumedThrough(seq: number, durable = RECEPTION_COUNT_DURABLE): Promise<void> {
      const jsm = await app.connection.jetstreamManager();
      await pollUntil(
        () => jsm.consumers.info(EVENTS_STREAM, durable),
        (info) => info.ack_floor.stream_seq >= seq,
        { timeoutMs: 15_000, what: `${durable} to acknowledge #${seq}` },
      );
    }

    const batchesConsumedThrough = (seq: number) =>
      consumedThrough(seq, RECEPTION_BATCH_COUNT_DURABLE);

    async function countOf(accountId: string, period: string): Promise<number | undefined> {
      const rows = await app.dataSource.query<Array<{ count: number }>>(
        `SELECT reception_count::int AS count FROM accounts.reception_counts
          WHERE account_id = $1 AND period_start = $2::date`,
        [accountId, period],
      );
      return rows[0]?.count;
    }

    const currentPeriod = () => new Date().toISOString().slice(0, 8) + '01';

    it('counts each message of a send once, however often its event comes, and records the activity', async () => {
      const { account } = await app.createAccount();
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      await publishReceptions(account.id, ids);
      // The same messages again under new event ids (a republished outbox row), twice, and alone.
      await publishReceptions(account.id, [...ids, ...ids]);
      for (const id of ids) await publishReception(account.id, id);
      await consumedThrough(await publishReception(account.id, ids[0] ?? ''));

      expect(await countOf(account.id, currentPeriod())).toBe(3);
      const [row] = await app.dataSource.query<Array<{ last_activity_at: Date | null }>>(
        'SELECT last_activity_at FROM accounts.accounts WHERE id = $1',
        [account.id],
      );
      expect(row?.last_activity_at).toBeInstanceOf(Date);
    });

    it('counts each message of reception batches once, however often its batch comes', async () => {
      const { account } = await app.createAccount();
      const { account: other } = await app.createAccount();
      const mine = [randomUUID(), randomUUID(), randomUUID()];
      const theirs = randomUUID();
      // One commit's batch holds several sends' receptions; redelivered under the same id, then
      // republished under a new one (an outbox row published again after a crash).
      const receptions = [
        ...mine.map((messageId) => ({ accountId: account.id, messageId })),
        { accountId: other.id, messageId: theirs },
      ];
      const batchId = randomUUID();
      await publishBatch(receptions, batchId);
      await publishBatch(receptions, batchId);
      await batchesConsumedThrough(await publishBatch(receptions));

      expect(await countOf(account.id, currentPeriod())).toBe(3);
      expect(await countOf(other.id, currentPeriod())).toBe(1);
    });

    it("counts a batch's receptions in the calendar month (UTC) of each one's send", async () => {
      const { account } = await app.createAccount();
      await batchesConsumedThrough(
        await publishBatch([
          { accountId: account.id, messageId: randomUUID(), timestamp: '2026-03-31T23:59:59.999Z' },
          { accountId: account.id, messageId: randomUUID(), timestamp: '2026-04-01T00:00:00.000Z' },
          { accountId: account.id, messageId: randomUUID(), timestamp: '2026-04-01T00:00:00.001Z' },
        ]),
      );

      expect(await countOf(account.id, '2026-03-01')).toBe(1);
      expect(await countOf(account.id, '2026-04-01')).toBe(2);
    });

    it('counts a send published before the upgrade once, from its send receptions and its batch alike', async () => {
      const { account } = await app.createAccount();
      const timestamp = new Date().toISOString();
      const before = [randomUUID(), randomUUID()];
      const after = randomUUID();
      // A send of the earlier version published both events; a later send, its batch alone.
      const sent = await publishReceptions(account.id, before, timestamp);
      const batched = await publishBatch([
        ...before.map((messageId) => ({ accountId: account.id, messageId, timestamp })),
        { accountId: account.id, messageId: after },
      ]);
      await consumedThrough(sent);
      await batchesConsumedThrough(batched);

      expect(await countOf(account.id, currentPeriod())).toBe(3);
    });

    it('drops a reception batch that can never be counted, and counts the next one', async () => {
      const { account } = await app.createAccount();
      await publish(MessagesStreamSubjects.receptionBatch.name, {
        id: randomUUID(),
        type: 'message.reception_batch',
        timestamp: new Date().toISOString(),
        data: { account_id: account.id, events: [] },
      });
      await batchesConsumedThrough(
        await publishBatch([{ accountId: account.id, messageId: randomUUID() }]),
      );

      expect(await countOf(account.id, currentPeriod())).toBe(1);
    });

    it('counts a reception in the calendar month (UTC) it was accepted in', async () => {
      const { account } = await app.createAccount();
      await publishReception(account.id, randomUUID(), '2026-01-31T23:59:59.999Z');
      await publishReception(account.id, randomUUID(), '2026-02-01T00:00:00.000Z');
      await consumedThrough(
        await publishReception(account.id, randomUUID(), '2026-02-10T00:00:00.000Z'),
      );

      expect(await countOf(account.id, '2026-01-01')).toBe(1);
      expect(await countOf(account.id, '2026-02-01')).toBe(2);
    });

    it('purges the ids of periods that ended longer ago than the retention, not the counts', async () => {
      const { account } = await app.createAccount();
      const old = randomUUID();
      const recent = randomUUID();
      await publishReception(account.id, old, '2020-03-15T00:00:00.000Z');
      await consumedThrough(await publishReception(account.id, recent));

      await app.app.get(CountedReceptionsPurgeService).purgeEndedPeriods(new Date());

      const kept = await app.dataSource.query<Array<{ message_id: string }>>(
        'SELECT message_id FROM accounts.counted_receptions WHERE message_id = ANY($1::uuid[])',
        [[old, recent]],
      );
      expect(kept.map((row) => row.message_id)).toEqual([recent]);
      expect(await countOf(account.id, '2020-03-01')).toBe(1);
    });

    it('reports the parent, live children, removed children and the total of the period', async () => {
      const { account: parent } = await app.createAccount();
      const child = (name: string) =>
        app.rpc.request(AccountsSubjects.createSubAccount, {
          account_id: parent.id,
          sub_account: { name, website: 'usage.example.com' },
        });
      const [live, removed] = [await child('Live'), await child('Removed')];
      await app.rpc.request(AccountsSubjects.deleteSubAccount, {
        account_id: parent.id,
        sub_account_id: removed.id,
      });
      let last = 0;
      for (const [accountId, count] of [
        [parent.id, 1],
        [live.id, 2],
        [removed.id, 1],
      ] as const) {
        for (let index = 0; index < count; index += 1) {
          last = await publishReception(accountId, randomUUID());
        }
      }
      await consumedThrough(last);

      const usage = await app.rpc.request(AccountsSubjects.getSubAccountsUsage, {
        account_id: parent.id,
      });

      expect(usage).toMatchObject({
        currency: 'usd',
        allocation_method: 'proportional',
        parent: { account_id: parent.id, reception_count: 1 },
        sub_accounts: [{ account_id: live.id, name: 'Live', reception_count: 2 }],
        removed_sub_accounts: { reception_count: 1 },
        total: { reception_count: 4 },
      });
      expect(usage.billing_period.start).toBe(`${currentPeriod()}T00:00:00.000Z`);
      await expect(
        app.rpc.request(AccountsSubjects.getSubAccountsUsage, { account_id: live.id }),
      ).rejects.toMatchObject({ code: AccountsErrorCode.NotAParentAccount });
    });
  });
}
