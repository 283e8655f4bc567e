import { createHash, randomUUID } from 'node:crypto';

import {
  AccountsErrorCode,
  AccountsSubjects,
  type ApiKeyChangedEvent,
  type ApiKeyRecord,
  type CreatedApiKeyRecord,
  type UpdateApiKeyRequest,
} from '@envoi/contracts-accounts';
import { CommonErrorCode, EVENTS_STREAM } from '@envoi/contracts-core';
import {
  type DomainDeletedStreamEvent,
  type DomainRecord,
  DomainsStreamSubjects,
} from '@envoi/contracts-domains';
// The conventions let apps' tests use type:testing libs; eslint.config.mjs does not yet.
import { pollUntil } from '@envoi/shared-testing';

import { DOMAIN_DELETED_DURABLE } from '../../src/api-keys/domain-events.controller';
import { DomainScopesService } from '../../src/api-keys/domain-scopes.service';
import {
  type AccountsTestApp,
  EventRecorder,
  uniqueDomain,
  UNKNOWN_ID,
  withoutSecret,
} from '../accounts-test-app';

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function domainScopesSuite(getApp: () => AccountsTestApp): void {
  describe('accounts service: domain scopes', () => {
    let app: AccountsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    async function newAccountId(): Promise<string> {
      return (await app.createAccount()).account.id;
    }

    function createKey(accountId: string, scopes: string[]): Promise<CreatedApiKeyRecord> {
      return app.rpc.request(AccountsSubjects.createApiKey, {
        account_id: accountId,
        key: { label: 'Scoped key', scopes },
      });
    }

    function updateKey(
      key: ApiKeyRecord,
      changes: UpdateApiKeyRequest['changes'],
    ): Promise<ApiKeyRecord> {
      return app.rpc.request(AccountsSubjects.updateApiKey, {
        account_id: key.account_id,
        key_id: key.id,
        changes,
      });
    }

    function getKey(key: ApiKeyRecord): Promise<ApiKeyRecord> {
      return app.rpc.request(AccountsSubjects.getApiKey, {
        account_id: key.account_id,
        key_id: key.id,
      });
    }

    function scopesOf(key: ApiKeyRecord): string[] {
      return key.scopes.map((scope) => scope.scope);
    }

    async function keyCount(accountId: string): Promise<number> {
      const [row] = await app.dataSource.query<Array<{ count: string }>>(
        'SELECT count(*) AS count FROM accounts.api_keys WHERE account_id = $1',
        [accountId],
      );
      return Number(row?.count);
    }

    /** Waits until the key's scopes are exactly `expected` (they change asynchronously). */
    function scopesBecome(key: ApiKeyRecord, expected: string[]): Promise<ApiKeyRecord> {
      return pollUntil(
        () => getKey(key),
        (current) => JSON.stringify(scopesOf(current)) === JSON.stringify(expected),
        { timeoutMs: 15_000, what: `the scopes of key ${key.id} to become ${expected.join(', ')}` },
      );
    }

    /** Publishes a domain.deleted event as the domains service's relay does. */
    async function publishDeletion(
      domain: DomainRecord,
      deletedAt = new Date().toISOString(),
    ): Promise<number> {
      const event: DomainDeletedStreamEvent = {
        id: randomUUID(),
        type: 'domain.deleted',
        timestamp: deletedAt,
        data: {
          domain_id: domain.id,
          domain: domain.domain,
          account_id: domain.account_id,
          deleted_at: deletedAt,
        },
      };
      const ack = await app.connection
        .jetstream()
        .publish(
          DomainsStreamSubjects.deleted.name,
          new TextEncoder().encode(JSON.stringify(event)),
          { msgID: event.id },
        );
      return ack.seq;
    }

    /** Waits until the accounts service has acknowledged every event up to `seq`. */
    async function consumedThrough(seq: number): Promise<void> {
      const jsm = await app.connection.jetstreamManager();
      await pollUntil(
        () => jsm.consumers.info(EVENTS_STREAM, DOMAIN_DELETED_DURABLE),
        (info) => info.ack_floor.stream_seq >= seq,
        { timeoutMs: 15_000, what: `the domain events consumer to acknowledge #${seq}` },
      );
    }

    describe('granting', () => {
      it('stores the id of the owned domain a scope names; the principal keeps the scope string', async () => {
        const accountId = await newAccountId();
        const domain = await app.createDomain(accountId);

        const key = await createKey(accountId, [
          `messages:send:{${domain.domain.toUpperCase()}.}`,
          'domains:read',
        ]);

        expect(key.scopes).toEqual([
          expect.objectContaining({
            scope: `messages:send:{${domain.domain}}`,
            domain_id: domain.id,
          }),
          expect.objectContaining({ scope: 'domains:read', domain_id: null }),
        ]);
        await expect(getKey(key)).resolves.toEqual(withoutSecret(key));
        const verified = await app.rpc.request(AccountsSubjects.verifyApiKey, {
          secret_hash: sha256(key.secret_key),
        });
        expect(verified.scopes).toEqual([`messages:send:{${domain.domain}}`, 'domains:read']);
      });

      it.each([
        ['that does not exist', false],
        ['of another account', true],
      ])('refuses a domain %s and writes nothing', async (_case, ownedElsewhere) => {
        const accountId = await newAccountId();
        const name = uniqueDomain();
        if (ownedElsewhere) await app.createDomain(await newAccountId(), name);
        const mine = await app.createDomain(accountId);

        await expect(
          createKey(accountId, [`messages:send:{${mine.domain}}`, `routes:read:{${name}}`]),
        ).rejects.toMatchObject({
          code: AccountsErrorCode.DomainNotOwned,
          message: `domain ${name} is not a domain of this account`,
        });
        expect(await keyCount(accountId)).toBe(1);
      });

      it('gives each account the id of its own domain of a shared name', async () => {
        const name = uniqueDomain();
        const theirs = await app.createDomain(await newAccountId(), name);
        const accountId = await newAccountId();
        const mine = await app.createDomain(accountId, name);

        const key = await createKey(accountId, [`messages:send:{${name}}`]);

        expect(mine.id).not.toBe(theirs.id);
        expect(key.scopes[0]?.domain_id).toBe(mine.id);
      });

      it('drops a domain scope covered by the same action’s :all before asking about it', async () => {
        const accountId = await newAccountId();

        const key = await createKey(accountId, [
          `messages:send:{${uniqueDomain()}}`,
          'messages:send:all',
        ]);

        expect(key.scopes).toEqual([
          expect.objectContaining({ scope: 'messages:send:all', domain_id: null }),
        ]);
      });

      it('answers account_not_found for an unknown account', async () => {
        await expect(
          createKey(UNKNOWN_ID, [`messages:send:{${uniqueDomain()}}`]),
        ).rejects.toMatchObject({ code: AccountsErrorCode.AccountNotFound });
      });
    });

    describe('updating', () => {
      it('resolves added domain scopes and keeps the records of those that stay', async () => {
        const accountId = await newAccountId();
        const first = await app.createDomain(accountId);
        const second = await app.createDomain(accountId);
        const key = await createKey(accountId, [`messages:send:{${first.domain}}`]);

        const updated = await updateKey(key, {
          scopes: [`messages:send:{${first.domain}}`, `messages:read:{${second.domain}}`],
        });

        expect(updated.scopes).toEqual([
          key.scopes[0],
          expect.objectContaining({
            scope: `messages:read:{${second.domain}}`,
            domain_id: second.id,
          }),
        ]);
      });

      it('refuses a domain the account does not own and changes nothing', async () => {
        const accountId = await newAccountId();
        const key = await createKey(accountId, ['domains:read']);
        const theirs = await app.createDomain(await newAccountId());

        await expect(
          updateKey(key, { label: 'Changed', scopes: [`messages:send:{${theirs.domain}}`] }),
        ).rejects.toMatchObject({
          code: AccountsErrorCode.DomainNotOwned,
          message: `domain ${theirs.domain} is not a domain of this account`,
        });
        await expect(getKey(key)).resolves.toEqual(withoutSecret(key));
      });

      it('drops domain scopes covered by the same action’s :all', async () => {
        const key = await createKey(await newAccountId(), ['domains:read']);

        const updated = await updateKey(key, {
          scopes: ['messages:read:all', `messages:read:{${uniqueDomain()}}`],
        });

        expect(scopesOf(updated)).toEqual(['messages:read:all']);
      });

      it('answers api_key_not_found for an unknown key', async () => {
        const accountId = await newAccountId();
        const domain = await app.createDomain(accountId);

        await expect(
          app.rpc.request(AccountsSubjects.updateApiKey, {
            account_id: accountId,
            key_id: UNKNOWN_ID,
            changes: { scopes: [`messages:send:{${domain.domain}}`] },
          }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.ApiKeyNotFound });
      });
    });

    describe('deleting a domain', () => {
      it('removes the scopes naming it from the keys of the account and announces those keys', async () => {
        const accountId = await newAccountId();
        const doomed = await app.createDomain(accountId);
        const kept = await app.createDomain(accountId);
        const mixed = await createKey(accountId, [
          `messages:send:{${doomed.domain}}`,
          `messages:read:{${kept.domain}}`,
          `routes:write:{${doomed.domain}}`,
          'domains:read',
        ]);
        const only = await createKey(accountId, [`domains:delete:{${doomed.domain}}`]);
        const untouched = await createKey(accountId, [`messages:send:{${kept.domain}}`]);
        const changes = new EventRecorder<ApiKeyChangedEvent>(
          app.connection,
          AccountsSubjects.apiKeyChanged,
        );
        try {
          await app.deleteDomain(doomed);

          const after = await scopesBecome(mixed, [
            `messages:read:{${kept.domain}}`,
            'domains:read',
          ]);
          expect(after.scopes).toEqual([mixed.scopes[1], mixed.scopes[3]]);
          expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(mixed.updated_at));
          // A key whose only scope went keeps existing, with no scopes (the record allows it).
          const emptied = await scopesBecome(only, []);
          expect(emptied.id).toBe(only.id);
          const verified = await app.rpc.request(AccountsSubjects.verifyApiKey, {
            secret_hash: sha256(only.secret_key),
          });
          expect(verified.scopes).toEqual([]);
          await pollUntil(
            () => changes.events.map((event) => event.key_id).sort(),
            (ids) => ids.includes(mixed.id) && ids.includes(only.id),
            { what: 'apiKeyChanged for both keys' },
          );
          expect(changes.events).toContainEqual({ key_id: mixed.id, account_id: accountId });
          expect(changes.events.some((event) => event.key_id === untouched.id)).toBe(false);
          await expect(getKey(untouched)).resolves.toEqual(withoutSecret(untouched));
        } finally {
          changes.stop();
        }
      });

      it('leaves the scopes of another account’s domain of the same name alone', async () => {
        const name = uniqueDomain();
        const ours = await app.createDomain(await newAccountId(), name);
        const theirs = await app.createDomain(await newAccountId(), name);
        const ourKey = await createKey(ours.account_id, [`messages:send:{${name}}`]);
        const theirKey = await createKey(theirs.account_id, [`messages:send:{${name}}`]);

        await app.deleteDomain(ours);

        await scopesBecome(ourKey, []);
        await expect(getKey(theirKey)).resolves.toEqual(withoutSecret(theirKey));
      });

      it('absorbs a redelivered deletion: nothing more is removed, nothing announced', async () => {
        const accountId = await newAccountId();
        const name = uniqueDomain();
        const old = await app.createDomain(accountId, name);
        const before = await createKey(accountId, [`messages:send:{${name}}`]);
        await app.deleteDomain(old);
        await scopesBecome(before, []);
        // The name comes back as a new domain, granted again.
        const renewed = await app.createDomain(accountId, name);
        const key = await createKey(accountId, [`messages:send:{${name}}`, 'domains:read']);
        const changes = new EventRecorder<ApiKeyChangedEvent>(
          app.connection,
          AccountsSubjects.apiKeyChanged,
        );
        try {
          await consumedThrough(await publishDeletion(old));
          await consumedThrough(await publishDeletion(old));

          await expect(getKey(key)).resolves.toEqual(withoutSecret(key));
          expect(key.scopes[0]?.domain_id).toBe(renewed.id);
          expect(changes.events.filter((event) => event.account_id === accountId)).toEqual([]);
        } finally {
          changes.stop();
        }
      });

      it('removes, by name, a scope granted before domain ids were resolved', async () => {
        const accountId = await newAccountId();
        const domain = await app.createDomain(accountId);
        const key = await createKey(accountId, ['domains:read']);
        await app.dataSource.query(
          `INSERT INTO accounts.api_key_scopes (id, api_key_id, scope, position, domain, domain_id)
           VALUES ($1, $2, $3, 1, $4, NULL)`,
          [randomUUID(), key.id, `messages:send:{${domain.domain}}`, domain.domain],
        );
        await scopesBecome(key, ['domains:read', `messages:send:{${domain.domain}}`]);
        // A replayed deletion of an earlier domain of that name is older than the scope.
        const earlier = { ...domain, id: randomUUID() };
        await consumedThrough(await publishDeletion(earlier, '2020-01-01T00:00:00.000Z'));
        await scopesBecome(key, ['domains:read', `messages:send:{${domain.domain}}`]);

        await app.deleteDomain(domain);

        await scopesBecome(key, ['domains:read']);
      });

      it('refuses to store a scope resolved just before the deletion was handled', async () => {
        const accountId = await newAccountId();
        const domain = await app.createDomain(accountId);
        const probe = await createKey(accountId, [`messages:send:{${domain.domain}}`]);
        await app.deleteDomain(domain);
        await scopesBecome(probe, []);
        const domainScopes = app.app.get(DomainScopesService);

        await expect(
          app.dataSource.transaction((manager) =>
            domainScopes.holdDomains(manager, [
              {
                scope: `messages:send:{${domain.domain}}`,
                domain: domain.domain,
                domainId: domain.id,
              },
            ]),
          ),
        ).rejects.toMatchObject({
          code: AccountsErrorCode.DomainNotOwned,
          message: `domain ${domain.domain} is not a domain of this account`,
        });
      });

      it('drops an unreadable event and goes on with the next', async () => {
        const seq = (
          await app.connection
            .jetstream()
            .publish(DomainsStreamSubjects.deleted.name, new TextEncoder().encode('{"type":1'))
        ).seq;
        await consumedThrough(seq);
        const accountId = await newAccountId();
        const domain = await app.createDomain(accountId);
        const key = await createKey(accountId, [`messages:send:{${domain.domain}}`]);

        await app.deleteDomain(domain);

        await scopesBecome(key, []);
      });
    });

    describe('with the domains service stopped', () => {
      it('answers unavailable and writes nothing; keys without domain scopes are still issued', async () => {
        const accountId = await newAccountId();
        const domain = await app.createDomain(accountId);
        const key = await createKey(accountId, ['domains:read']);
        await app.stopDomains();
        try {
          await expect(
            createKey(accountId, [`messages:send:{${domain.domain}}`]),
          ).rejects.toMatchObject({
            code: CommonErrorCode.Unavailable,
            message: 'service temporarily unavailable',
          });
          await expect(
            updateKey(key, { scopes: [`messages:send:{${domain.domain}}`] }),
          ).rejects.toMatchObject({ code: CommonErrorCode.Unavailable });
          expect(await keyCount(accountId)).toBe(2);
          await expect(getKey(key)).resolves.toEqual(withoutSecret(key));

          await expect(createKey(accountId, ['messages:send:all'])).resolves.toMatchObject({
            scopes: [expect.objectContaining({ scope: 'messages:send:all' })],
          });
        } finally {
          await app.startDomains();
        }
        await expect(
          createKey(accountId, [`messages:send:{${domain.domain}}`]),
        ).resolves.toMatchObject({ scopes: [expect.objectContaining({ domain_id: domain.id })] });
      });
    });
  });
}
