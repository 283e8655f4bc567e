import { randomUUID } from 'node:crypto';

import {
  type SuppressionCreatedEvent,
  SuppressionsErrorCode,
  SuppressionsStreamSubjects,
  SuppressionsSubjects,
} from '@envoi/contracts-suppressions';
import { pollUntil } from '@envoi/shared-testing';

import { ExpiredPurgeService } from '../../src/suppressions/expired-purge.service';
import {
  createSuppression,
  expire,
  newAccountId,
  storedRows,
  streamMessages,
  type SuppressionsTestApp,
  uniqueDomain,
  uniqueEmail,
} from '../suppressions-test-app';

export function eventsSuite(getApp: () => SuppressionsTestApp): void {
  describe('suppressions service: events and purge', () => {
    let app: SuppressionsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    /** The account's suppression.created events once `count` of them are on the stream. */
    async function eventsOf(accountId: string, count: number) {
      return pollUntil(
        async () =>
          (
            await streamMessages<SuppressionCreatedEvent>(app, SuppressionsStreamSubjects.created)
          ).filter((message) => message.event.data.account_id === accountId),
        (messages) => messages.length >= count,
        { what: `${count} suppression.created events of ${accountId}` },
      );
    }

    it('publishes suppression.created once per suppression, with the webhook payload', async () => {
      const accountId = newAccountId();
      const domain = uniqueDomain();
      const created = await createSuppression(app, accountId, {
        email: uniqueEmail(),
        domain,
        reason: 'User requested removal',
      });
      await expect(
        createSuppression(app, accountId, { email: created.email, domain }),
      ).rejects.toMatchObject({ code: SuppressionsErrorCode.AlreadyExists });
      const global = await createSuppression(app, accountId);

      const messages = await eventsOf(accountId, 2);

      expect(messages).toHaveLength(2);
      const [first, second] = messages;
      expect(first?.event).toEqual({
        id: first?.msgId,
        type: 'suppression.created',
        timestamp: created.created_at,
        data: {
          account_id: accountId,
          recipient: created.email,
          created_at: created.created_at,
          expires_at: created.expires_at,
          reason: 'User requested removal',
          sending_domain: domain,
        },
      });
      expect(second?.event.data).toMatchObject({
        recipient: global.email,
        reason: '',
        sending_domain: '',
      });
      expect(new Set(messages.map((message) => message.event.id)).size).toBe(2);
    });

    it('publishes one event for an automatic suppression however often it is asked for', async () => {
      const accountId = newAccountId();
      const request = {
        account_id: accountId,
        email: uniqueEmail(),
        reason: 'Too many hard bounces',
      };
      await app.rpc.request(SuppressionsSubjects.createAutomatic, request);
      await app.rpc.request(SuppressionsSubjects.createAutomatic, request);
      // A marker created afterwards: once its event is there, every earlier one is too.
      await createSuppression(app, accountId);

      const messages = await eventsOf(accountId, 2);

      expect(messages.map((message) => message.event.data.recipient)).toEqual([
        request.email,
        expect.any(String) as unknown,
      ]);
      expect(messages[0]?.event.data.reason).toBe('Too many hard bounces');
    });

    it('purges expired suppressions in bounded batches, and nothing unexpired', async () => {
      const purger = app.app.get(ExpiredPurgeService);
      const batch = app.config.SUPPRESSION_PURGE_BATCH;
      // Whatever earlier tests left expired goes first.
      for (let run = 0; run < 100 && (await purger.purgeExpired()) > 0; run++);

      const accountId = newAccountId();
      const kept = await createSuppression(app, accountId);
      const expiring = batch * 10 + 3;
      await Promise.all(
        Array.from({ length: expiring }, async () =>
          expire(
            app,
            await createSuppression(app, accountId, { email: `${randomUUID()}@example.test` }),
          ),
        ),
      );

      await expect(purger.purgeExpired()).resolves.toBe(batch * 10);
      await expect(purger.purgeExpired()).resolves.toBe(3);
      await expect(purger.purgeExpired()).resolves.toBe(0);
      await expect(storedRows(app, accountId)).resolves.toBe(1);
      await expect(
        app.rpc.request(SuppressionsSubjects.list, { account_id: accountId, page: { limit: 10 } }),
      ).resolves.toMatchObject({ data: [{ id: kept.id }] });
    });
  });
}
