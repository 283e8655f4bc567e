import type { Page } from '@envoi/contracts-core';
import { CommonErrorCode } from '@envoi/contracts-core';
import {
  type SuppressionFilters,
  type SuppressionRecord,
  SuppressionsErrorCode,
  SuppressionsSubjects,
} from '@envoi/contracts-suppressions';

import {
  anyString,
  createSuppression,
  expire,
  inFuture,
  newAccountId,
  storedRows,
  type SuppressionsTestApp,
  uniqueDomain,
  uniqueEmail,
} from '../suppressions-test-app';

const RECORD_FIELDS = ['created_at', 'domain', 'email', 'expires_at', 'id', 'object', 'reason'];

export function suppressionsSuite(getApp: () => SuppressionsTestApp): void {
  describe('suppressions service: the suppression list', () => {
    let app: SuppressionsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    function list(
      accountId: string,
      filters?: SuppressionFilters,
      page: { limit: number; after?: string; before?: string } = { limit: 100 },
    ): Promise<Page<SuppressionRecord>> {
      return app.rpc.request(SuppressionsSubjects.list, {
        account_id: accountId,
        page,
        ...(filters ? { filters } : {}),
      });
    }

    const ids = (page: Page<SuppressionRecord>): string[] => page.data.map((record) => record.id);

    /** An account with suppressions of domains it does not own: an unknown one, another's. */
    async function withDomainsNotOwned(): Promise<{ accountId: string; domains: string[] }> {
      const accountId = newAccountId();
      const domains = [uniqueDomain(), (await app.createDomain(newAccountId())).domain];
      for (const domain of domains) await createSuppression(app, accountId, { domain });
      return { accountId, domains };
    }

    describe('create', () => {
      it('normalises the address and domain and answers the contract record', async () => {
        const accountId = newAccountId();
        const email = uniqueEmail();
        const domain = uniqueDomain();
        const expiresAt = '2031-06-01T12:00:00.000Z';

        const created = await createSuppression(app, accountId, {
          email: `  ${email.toUpperCase()} `,
          domain: ` ${domain.toUpperCase()}.`,
          reason: 'User requested removal',
          expires_at: '2031-06-01T14:00:00+02:00',
        });

        expect(Object.keys(created).sort()).toEqual(RECORD_FIELDS);
        expect(created).toEqual({
          object: 'suppression',
          id: anyString,
          created_at: anyString,
          email,
          domain,
          reason: 'User requested removal',
          expires_at: expiresAt,
        });
        expect(Math.abs(Date.parse(created.created_at) - Date.now())).toBeLessThan(60_000);
      });

      it('applies to every domain without one, and has a null reason without one', async () => {
        const created = await app.rpc.request(SuppressionsSubjects.create, {
          account_id: newAccountId(),
          body: { email: uniqueEmail(), expires_at: inFuture() },
        });
        expect(created).toMatchObject({ domain: null, reason: null });
      });

      it('answers already_exists for the same address and domain, in any case', async () => {
        const accountId = newAccountId();
        const email = uniqueEmail();
        const domain = uniqueDomain();
        await createSuppression(app, accountId, { email });
        await createSuppression(app, accountId, { email, domain });

        await expect(
          createSuppression(app, accountId, { email: email.toUpperCase() }),
        ).rejects.toMatchObject({
          code: SuppressionsErrorCode.AlreadyExists,
          message: 'suppression already exists',
        });
        await expect(
          createSuppression(app, accountId, { email, domain: domain.toUpperCase() }),
        ).rejects.toMatchObject({ code: SuppressionsErrorCode.AlreadyExists });

        // Another domain, and another account, are other suppressions.
        await expect(
          createSuppression(app, accountId, { email, domain: uniqueDomain() }),
        ).resolves.toMatchObject({ email });
        await expect(createSuppression(app, newAccountId(), { email })).resolves.toMatchObject({
          email,
        });
      });

      it('creates one suppression out of concurrent duplicates', async () => {
        const accountId = newAccountId();
        const email = uniqueEmail();

        const outcomes = await Promise.allSettled(
          Array.from({ length: 6 }, () => createSuppression(app, accountId, { email })),
        );

        expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
        for (const outcome of outcomes) {
          if (outcome.status === 'rejected') {
            expect(outcome.reason).toMatchObject({ code: SuppressionsErrorCode.AlreadyExists });
          }
        }
        await expect(storedRows(app, accountId)).resolves.toBe(1);
      });

      it('refuses bad addresses, domains and expiries with their codes', async () => {
        const accountId = newAccountId();
        await expect(createSuppression(app, accountId, { email: 'nope' })).rejects.toMatchObject({
          code: SuppressionsErrorCode.InvalidEmail,
          message: 'email must be a valid email address',
        });
        await expect(
          createSuppression(app, accountId, { domain: 'not a domain' }),
        ).rejects.toMatchObject({ code: SuppressionsErrorCode.InvalidDomain });
        await expect(
          createSuppression(app, accountId, {
            expires_at: new Date(Date.now() - 1_000).toISOString(),
          }),
        ).rejects.toMatchObject({
          code: SuppressionsErrorCode.InvalidExpiry,
          message: 'expires_at must be in the future',
        });
        await expect(
          createSuppression(app, accountId, { expires_at: '2030-01-01' }),
        ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
        await expect(
          app.rpc.request(SuppressionsSubjects.create, {
            account_id: 'not-a-uuid',
            body: { email: uniqueEmail(), expires_at: inFuture() },
          }),
        ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
        await expect(storedRows(app, accountId)).resolves.toBe(0);
      });

      it('takes the place of an expired suppression of the same address and domain', async () => {
        const accountId = newAccountId();
        const email = uniqueEmail();
        const old = await createSuppression(app, accountId, { email, reason: 'old' });
        await expire(app, old);

        const renewed = await createSuppression(app, accountId, { email, reason: 'new' });

        expect(renewed.id).not.toBe(old.id);
        expect(ids(await list(accountId))).toEqual([renewed.id]);
        await expect(storedRows(app, accountId)).resolves.toBe(1);
      });
    });

    describe('list', () => {
      it('lists unexpired suppressions newest first, never another account’s', async () => {
        const accountId = newAccountId();
        const first = await createSuppression(app, accountId);
        const second = await createSuppression(app, accountId, { domain: uniqueDomain() });
        const expired = await createSuppression(app, accountId);
        await expire(app, expired);
        await createSuppression(app, newAccountId());

        const page = await list(accountId);

        expect(ids(page)).toEqual([second.id, first.id]);
        expect(page.has_more).toBe(false);
        expect(page.next_position).toBeUndefined();
      });

      it('filters by address (normalised), domain and creation time', async () => {
        const accountId = newAccountId();
        const email = uniqueEmail();
        const { domain } = await app.createDomain(accountId);
        const global = await createSuppression(app, accountId, { email });
        const scoped = await createSuppression(app, accountId, { email, domain });
        const other = await createSuppression(app, accountId, { domain });

        expect(ids(await list(accountId, { email: ` ${email.toUpperCase()}` }))).toEqual([
          scoped.id,
          global.id,
        ]);
        expect(ids(await list(accountId, { domain: domain.toUpperCase() }))).toEqual([
          other.id,
          scoped.id,
        ]);
        expect(ids(await list(accountId, { email, domain }))).toEqual([scoped.id]);

        await app.dataSource.query(
          `UPDATE suppressions.suppressions SET created_at = $2 WHERE id = $1`,
          [global.id, '2020-01-01T00:00:00Z'],
        );
        expect(
          ids(
            await list(accountId, {
              from_time: '2019-12-31T23:00:00Z',
              to_time: '2020-01-01T00:00:01Z',
            }),
          ),
        ).toEqual([global.id]);
        expect(ids(await list(accountId, { to_time: '2020-01-01T00:00:00Z' }))).toEqual([]);
        expect(ids(await list(accountId, { from_time: '2020-01-01T00:00:01Z' }))).toEqual([
          other.id,
          scoped.id,
        ]);
      });

      it('answers domain_not_found for a domain the account does not own', async () => {
        const { accountId, domains } = await withDomainsNotOwned();
        for (const domain of domains) {
          await expect(list(accountId, { domain })).rejects.toMatchObject({
            code: SuppressionsErrorCode.DomainNotFound,
            message: 'domain not found',
          });
        }
      });

      it('refuses bad filters', async () => {
        const accountId = newAccountId();
        await expect(list(accountId, { email: 'nope' })).rejects.toMatchObject({
          code: SuppressionsErrorCode.InvalidEmail,
        });
        await expect(list(accountId, { domain: 'nope' })).rejects.toMatchObject({
          code: SuppressionsErrorCode.InvalidDomain,
        });
        await expect(
          list(accountId, { from_time: '2030-01-02T00:00:00Z', to_time: '2030-01-01T00:00:00Z' }),
        ).rejects.toMatchObject({ code: SuppressionsErrorCode.InvalidTimeRange });
        await expect(list(accountId, { from_time: 'yesterday' })).rejects.toMatchObject({
          code: CommonErrorCode.ValidationFailed,
        });
      });

      it('pages forwards and backwards with positions', async () => {
        const accountId = newAccountId();
        const created: SuppressionRecord[] = [];
        for (let i = 0; i < 5; i++) created.push(await createSuppression(app, accountId));
        const newestFirst = created.map((record) => record.id).reverse();

        const first = await list(accountId, undefined, { limit: 2 });
        expect(ids(first)).toEqual(newestFirst.slice(0, 2));
        expect(first.has_more).toBe(true);
        const second = await list(accountId, undefined, {
          limit: 2,
          after: first.next_position ?? '',
        });
        expect(ids(second)).toEqual(newestFirst.slice(2, 4));
        const third = await list(accountId, undefined, {
          limit: 2,
          after: second.next_position ?? '',
        });
        expect(ids(third)).toEqual(newestFirst.slice(4));
        expect(third.has_more).toBe(false);

        const back = await list(accountId, undefined, {
          limit: 2,
          before: second.previous_position ?? '',
        });
        expect(ids(back)).toEqual(newestFirst.slice(0, 2));
      });
    });

    describe('delete', () => {
      function remove(accountId: string, email: string, domain?: string) {
        return app.rpc.request(SuppressionsSubjects.delete, {
          account_id: accountId,
          email,
          ...(domain === undefined ? {} : { domain }),
        });
      }

      it('deletes every suppression of the address without a domain', async () => {
        const accountId = newAccountId();
        const email = uniqueEmail();
        await createSuppression(app, accountId, { email });
        await createSuppression(app, accountId, { email, domain: uniqueDomain() });
        const kept = await createSuppression(app, accountId);

        await expect(remove(accountId, ` ${email.toUpperCase()} `)).resolves.toEqual({
          message: '2 suppressions deleted',
        });
        expect(ids(await list(accountId))).toEqual([kept.id]);
      });

      it('deletes only the domain’s suppression with a domain', async () => {
        const accountId = newAccountId();
        const email = uniqueEmail();
        const domain = uniqueDomain();
        const global = await createSuppression(app, accountId, { email });
        await createSuppression(app, accountId, { email, domain });

        await expect(remove(accountId, email, domain.toUpperCase())).resolves.toEqual({
          message: '1 suppression deleted',
        });
        expect(ids(await list(accountId))).toEqual([global.id]);
        await expect(remove(accountId, email, domain)).rejects.toMatchObject({
          code: SuppressionsErrorCode.NotFound,
          message: 'suppression not found',
        });
      });

      it('answers not_found for an unknown, expired or foreign suppression', async () => {
        const accountId = newAccountId();
        await expect(remove(accountId, uniqueEmail())).rejects.toMatchObject({
          code: SuppressionsErrorCode.NotFound,
        });

        const expired = await createSuppression(app, accountId);
        await expire(app, expired);
        await expect(remove(accountId, expired.email)).rejects.toMatchObject({
          code: SuppressionsErrorCode.NotFound,
        });

        const theirs = await createSuppression(app, newAccountId());
        await expect(remove(accountId, theirs.email)).rejects.toMatchObject({
          code: SuppressionsErrorCode.NotFound,
        });
        await expect(remove(accountId, 'nope')).rejects.toMatchObject({
          code: SuppressionsErrorCode.InvalidEmail,
        });
      });
    });

    describe('wipe', () => {
      function wipe(accountId: string, domain?: string) {
        return app.rpc.request(SuppressionsSubjects.wipe, {
          account_id: accountId,
          ...(domain === undefined ? {} : { domain }),
        });
      }

      it('deletes the domain’s suppressions only, with a domain', async () => {
        const accountId = newAccountId();
        const { domain } = await app.createDomain(accountId);
        const global = await createSuppression(app, accountId);
        const elsewhere = await createSuppression(app, accountId, { domain: uniqueDomain() });
        await createSuppression(app, accountId, { domain });
        await createSuppression(app, accountId, { domain });

        await expect(wipe(accountId, `${domain.toUpperCase()}.`)).resolves.toEqual({
          message: '2 suppressions deleted',
        });
        expect(ids(await list(accountId))).toEqual([elsewhere.id, global.id]);
        await expect(wipe(accountId, domain)).resolves.toEqual({
          message: '0 suppressions deleted',
        });
        await expect(wipe(accountId, 'not a domain')).rejects.toMatchObject({
          code: SuppressionsErrorCode.InvalidDomain,
        });
      });

      it('deletes nothing for a domain the account does not own (domain_not_found)', async () => {
        const { accountId, domains } = await withDomainsNotOwned();
        for (const domain of domains) {
          await expect(wipe(accountId, domain)).rejects.toMatchObject({
            code: SuppressionsErrorCode.DomainNotFound,
          });
        }
        await expect(storedRows(app, accountId)).resolves.toBe(2);
      });

      it('deletes every suppression of the account and nothing of another', async () => {
        const accountId = newAccountId();
        const otherAccount = newAccountId();
        await createSuppression(app, accountId);
        await createSuppression(app, accountId, { domain: uniqueDomain() });
        const expired = await createSuppression(app, accountId);
        await expire(app, expired);
        const theirs = await createSuppression(app, otherAccount);

        await expect(wipe(accountId)).resolves.toEqual({ message: '2 suppressions deleted' });

        await expect(storedRows(app, accountId)).resolves.toBe(0);
        expect(ids(await list(otherAccount))).toEqual([theirs.id]);
      });
    });
  });
}
