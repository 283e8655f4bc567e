import {
  REASON_MAX,
  SNAPSHOT_SUPPRESSIONS_MAX,
  type SuppressionsChangedEvent,
  type SuppressionSnapshotResult,
  SuppressionsSubjects,
} from '@envoi/contracts-suppressions';
import { subscribeBroadcast } from '@envoi/shared-nats';

import {
  createSuppression,
  expire,
  newAccountId,
  type SuppressionsTestApp,
  uniqueDomain,
  uniqueEmail,
} from '../suppressions-test-app';

export function snapshotSuite(getApp: () => SuppressionsTestApp): void {
  describe("suppressions service: an account's snapshot and its change broadcasts", () => {
    let app: SuppressionsTestApp;
    /** Account ids of the change broadcasts received so far, in order. */
    const changed: string[] = [];

    beforeAll(() => {
      app = getApp();
      subscribeBroadcast<SuppressionsChangedEvent>(
        app.connection,
        SuppressionsSubjects.changed,
        (event) => changed.push(event.account_id),
        () => undefined,
      );
    });

    function snapshot(accountId: string, max = 100): Promise<SuppressionSnapshotResult> {
      return app.rpc.request(SuppressionsSubjects.snapshot, { account_id: accountId, max });
    }

    it('answers the unexpired suppressions of the account only, with their domains and reasons', async () => {
      const accountId = newAccountId();
      const domain = uniqueDomain();
      const global = await createSuppression(app, accountId, { reason: 'everywhere' });
      const scoped = await createSuppression(app, accountId, { domain });
      const expired = await createSuppression(app, accountId);
      await expire(app, expired);
      await createSuppression(app, newAccountId(), { email: uniqueEmail('other') });

      const { suppressions } = await snapshot(accountId);

      expect(suppressions).toHaveLength(2);
      expect(suppressions).toEqual(
        expect.arrayContaining([
          {
            email: global.email,
            domain: null,
            reason: 'everywhere',
            expires_at: global.expires_at,
          },
          { email: scoped.email, domain, reason: '', expires_at: scoped.expires_at },
        ]),
      );
    });

    it('answers null for an account with more suppressions than asked for', async () => {
      const accountId = newAccountId();
      for (let index = 0; index < 3; index += 1) await createSuppression(app, accountId);

      await expect(snapshot(accountId, 2)).resolves.toEqual({ suppressions: null });
      expect((await snapshot(accountId, 3)).suppressions).toHaveLength(3);
      await expect(snapshot(newAccountId(), 0)).resolves.toEqual({ suppressions: [] });
    });

    it('answers null for a snapshot whose reply would be too large, however few it holds', async () => {
      /** `count` unexpired suppressions of a new account, each with the reason. */
      async function accountWith(count: number, reason: string): Promise<string> {
        const accountId = newAccountId();
        await app.dataSource.query(
          `INSERT INTO suppressions.suppressions
             (id, account_id, email, domain, reason, created_at, expires_at, source)
           SELECT gen_random_uuid(), $1, 'many' || n || '@example.test', NULL, $3, now(),
             now() + interval '1 day', 'manual'
           FROM generate_series(1, $2::int) AS n`,
          [accountId, count, reason],
        );
        return accountId;
      }
      // 1 000 reasons of 255 quotes, each escaped as JSON: over SNAPSHOT_REPLY_MAX_BYTES.
      const quoted = await accountWith(SNAPSHOT_SUPPRESSIONS_MAX, '"'.repeat(REASON_MAX));
      const plain = await accountWith(SNAPSHOT_SUPPRESSIONS_MAX, 'r'.repeat(REASON_MAX));

      await expect(snapshot(quoted, SNAPSHOT_SUPPRESSIONS_MAX)).resolves.toEqual({
        suppressions: null,
      });
      expect((await snapshot(plain, SNAPSHOT_SUPPRESSIONS_MAX)).suppressions).toHaveLength(
        SNAPSHOT_SUPPRESSIONS_MAX,
      );
    });

    it('broadcasts a created, deleted and wiped suppression before answering', async () => {
      const accountId = newAccountId();
      const email = uniqueEmail();

      await createSuppression(app, accountId, { email });
      expect(changed.filter((id) => id === accountId)).toHaveLength(1);

      await app.rpc.request(SuppressionsSubjects.delete, { account_id: accountId, email });
      expect(changed.filter((id) => id === accountId)).toHaveLength(2);

      await app.rpc.request(SuppressionsSubjects.wipe, { account_id: accountId });
      expect(changed.filter((id) => id === accountId)).toHaveLength(3);
    });

    it('broadcasts an automatic suppression it creates, not one already covered', async () => {
      const accountId = newAccountId();
      const email = uniqueEmail();
      const request = { account_id: accountId, email, domain: uniqueDomain(), reason: 'bounced' };

      await expect(
        app.rpc.request(SuppressionsSubjects.createAutomatic, request),
      ).resolves.toMatchObject({ created: true });
      expect(changed.filter((id) => id === accountId)).toHaveLength(1);

      await expect(
        app.rpc.request(SuppressionsSubjects.createAutomatic, request),
      ).resolves.toMatchObject({ created: false });
      expect(changed.filter((id) => id === accountId)).toHaveLength(1);
    });
  });
}
