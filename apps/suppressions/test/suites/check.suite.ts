import { CommonErrorCode } from '@envoi/contracts-core';
import {
  type CheckSuppressionsResult,
  SuppressionsErrorCode,
  SuppressionsSubjects,
} from '@envoi/contracts-suppressions';

import {
  createSuppression,
  expire,
  newAccountId,
  type SuppressionsTestApp,
  uniqueDomain,
  uniqueEmail,
} from '../suppressions-test-app';

export function checkSuite(getApp: () => SuppressionsTestApp): void {
  describe('suppressions service: send-time check', () => {
    let app: SuppressionsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    function check(
      accountId: string,
      domain: string,
      emails: string[],
    ): Promise<CheckSuppressionsResult> {
      return app.rpc.request(SuppressionsSubjects.check, { account_id: accountId, domain, emails });
    }

    it('answers the suppressed ones among a batch of 1000, as given and in order', async () => {
      const accountId = newAccountId();
      const sender = uniqueDomain();
      const emails = Array.from({ length: 1_000 }, (_, i) => `batch${i}-${uniqueEmail()}`);
      const suppressedIndexes = [3, 250, 251, 999];
      for (const index of suppressedIndexes) {
        await createSuppression(app, accountId, { email: emails[index], reason: `r${index}` });
      }
      const asked = emails.map((email, index) =>
        index === 250 ? ` ${email.toUpperCase()}` : email,
      );

      const result = await check(accountId, sender, asked);

      expect(result).toEqual({
        suppressed: suppressedIndexes.map((index) => ({
          email: asked[index],
          reason: `r${index}`,
        })),
      });
    });

    it('applies an account-wide suppression to every sender domain, a domain’s to it only', async () => {
      const accountId = newAccountId();
      const sender = uniqueDomain();
      const global = uniqueEmail('global');
      const scoped = uniqueEmail('scoped');
      const elsewhere = uniqueEmail('elsewhere');
      await createSuppression(app, accountId, { email: global, reason: 'everywhere' });
      await createSuppression(app, accountId, { email: scoped, domain: sender, reason: 'here' });
      await createSuppression(app, accountId, { email: elsewhere, domain: uniqueDomain() });

      await expect(
        check(accountId, ` ${sender.toUpperCase()}.`, [global, scoped, elsewhere]),
      ).resolves.toEqual({
        suppressed: [
          { email: global, reason: 'everywhere' },
          { email: scoped, reason: 'here' },
        ],
      });
      await expect(check(accountId, uniqueDomain(), [global, scoped, elsewhere])).resolves.toEqual({
        suppressed: [{ email: global, reason: 'everywhere' }],
      });
    });

    it('prefers the domain’s own reason, and answers "" for a suppression without one', async () => {
      const accountId = newAccountId();
      const sender = uniqueDomain();
      const both = uniqueEmail();
      const bare = uniqueEmail();
      await createSuppression(app, accountId, { email: both, reason: 'account-wide' });
      await createSuppression(app, accountId, { email: both, domain: sender, reason: 'domain' });
      await createSuppression(app, accountId, { email: bare });

      await expect(check(accountId, sender, [both, bare])).resolves.toEqual({
        suppressed: [
          { email: both, reason: 'domain' },
          { email: bare, reason: '' },
        ],
      });
    });

    it('ignores expired suppressions, other accounts’, and what is not an address', async () => {
      const accountId = newAccountId();
      const sender = uniqueDomain();
      const expired = await createSuppression(app, accountId);
      await expire(app, expired);
      const theirs = await createSuppression(app, newAccountId());

      await expect(
        check(accountId, sender, [expired.email, theirs.email, 'not an address', '']),
      ).resolves.toEqual({ suppressed: [] });
    });

    it('refuses an empty batch or more than 1000 addresses', async () => {
      const accountId = newAccountId();
      await expect(check(accountId, uniqueDomain(), [])).rejects.toMatchObject({
        code: CommonErrorCode.ValidationFailed,
      });
      await expect(
        check(
          accountId,
          uniqueDomain(),
          Array.from({ length: 1_001 }, () => uniqueEmail()),
        ),
      ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
    });

    describe('createAutomatic', () => {
      it('suppresses for the configured lifetime, once', async () => {
        const accountId = newAccountId();
        const email = uniqueEmail();
        const domain = uniqueDomain();
        const request = {
          account_id: accountId,
          email: email.toUpperCase(),
          domain,
          reason: 'Too many hard bounces',
        };

        const first = await app.rpc.request(SuppressionsSubjects.createAutomatic, request);
        const again = await app.rpc.request(SuppressionsSubjects.createAutomatic, request);

        expect(first.created).toBe(true);
        expect(first.suppression).toMatchObject({ email, domain, reason: 'Too many hard bounces' });
        const lifetime =
          Date.parse(first.suppression.expires_at) - Date.parse(first.suppression.created_at);
        expect(Math.abs(lifetime - app.config.SUPPRESSION_AUTOMATIC_TTL_MS)).toBeLessThan(5_000);
        expect(again).toEqual({ created: false, suppression: first.suppression });
        await expect(check(accountId, domain, [email])).resolves.toEqual({
          suppressed: [{ email, reason: 'Too many hard bounces' }],
        });
      });

      it('leaves an address an account-wide suppression covers as it is', async () => {
        const accountId = newAccountId();
        const global = await createSuppression(app, accountId, { reason: 'manual' });

        const result = await app.rpc.request(SuppressionsSubjects.createAutomatic, {
          account_id: accountId,
          email: global.email,
          domain: uniqueDomain(),
          reason: 'bounced',
        });

        expect(result).toEqual({ created: false, suppression: global });
      });

      it('refuses an expiry in the past and a bad address', async () => {
        const accountId = newAccountId();
        await expect(
          app.rpc.request(SuppressionsSubjects.createAutomatic, {
            account_id: accountId,
            email: uniqueEmail(),
            reason: 'bounced',
            expires_at: '2020-01-01T00:00:00Z',
          }),
        ).rejects.toMatchObject({ code: SuppressionsErrorCode.InvalidExpiry });
        await expect(
          app.rpc.request(SuppressionsSubjects.createAutomatic, {
            account_id: accountId,
            email: 'nope',
            reason: 'bounced',
          }),
        ).rejects.toMatchObject({ code: SuppressionsErrorCode.InvalidEmail });
      });
    });
  });
}
