import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';

import { CommonErrorCode } from '@envoi/contracts-core';
import {
  type DomainChangedEvent,
  type DomainDeletedEvent,
  type DomainRecord,
  DomainsErrorCode,
  DomainsStreamSubjects,
  DomainsSubjects,
} from '@envoi/contracts-domains';
import { decodePacket, type NestEventPacket } from '@envoi/shared-nats';
import { pollUntil } from '@envoi/shared-testing';

import {
  anyString,
  createDomain,
  type DomainsTestApp,
  newAccountId,
  recordOf,
  streamMessages,
  uniqueDomain,
} from '../domains-test-app';

const DOMAIN_FIELDS = [
  'account_id',
  'created_at',
  'dkim_rotation_interval_days',
  'dkim_selector',
  'dns_records',
  'dns_valid',
  'domain',
  'dsn_recipient',
  'id',
  'last_dns_check_at',
  'media_subdomain',
  'object',
  'return_path_subdomain',
  'rotation_ready',
  'subscription_subdomain',
  'tracking_subdomain',
  'updated_at',
];

export function domainsSuite(getApp: () => DomainsTestApp): void {
  describe('domains service: domains', () => {
    let app: DomainsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    function ref(domain: DomainRecord) {
      return { account_id: domain.account_id, domain: domain.domain };
    }

    describe('createDomain', () => {
      it('normalises the name and answers the contract record with the records to publish', async () => {
        const accountId = newAccountId();
        const name = uniqueDomain();

        const domain = await createDomain(app, accountId, { domain: `  ${name.toUpperCase()}. ` });

        expect(Object.keys(domain).sort()).toEqual(DOMAIN_FIELDS);
        expect(domain).toMatchObject({
          object: 'domain',
          domain: name,
          account_id: accountId,
          last_dns_check_at: null,
          dns_valid: false,
          tracking_subdomain: null,
          return_path_subdomain: null,
          subscription_subdomain: null,
          media_subdomain: null,
          dkim_rotation_interval_days: null,
          dkim_selector: null,
          rotation_ready: false,
          dsn_recipient: null,
        });
        expect(domain.dns_records).toEqual([
          {
            type: 'TXT',
            label: 'SPF',
            host: name,
            content: 'v=spf1 include:spf.envoi.test ~all',
            required: true,
            propagated: false,
          },
          {
            type: 'TXT',
            label: 'DKIM',
            host: `envoi._domainkey.${name}`,
            content: expect.stringMatching(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/) as unknown,
            required: true,
            propagated: false,
          },
          {
            type: 'TXT',
            label: 'DMARC',
            host: `_dmarc.${name}`,
            content: 'v=DMARC1; p=quarantine; sp=none; adkim=r; aspf=r;',
            required: true,
            propagated: false,
          },
          {
            type: 'CNAME',
            label: 'Return-Path',
            host: `bounces.${name}`,
            content: 'bounces.envoi.test',
            required: false,
            propagated: false,
          },
          {
            type: 'CNAME',
            label: 'Tracking',
            host: `click.${name}`,
            content: 'track.envoi.test',
            required: false,
            propagated: false,
          },
          {
            type: 'MX',
            label: 'Inbound MX',
            host: name,
            content: '10 mx.envoi.test',
            required: false,
            propagated: false,
          },
        ]);
      });

      it('publishes a fresh 2048-bit RSA key per domain', async () => {
        const accountId = newAccountId();
        const first = await createDomain(app, accountId);
        const second = await createDomain(app, accountId);

        const keyOf = (domain: DomainRecord) =>
          /p=(.+)$/.exec(recordOf(domain, 'DKIM').content)?.[1] ?? '';
        const key = createPublicKey({
          key: Buffer.from(keyOf(first), 'base64'),
          format: 'der',
          type: 'spki',
        });
        expect(key.asymmetricKeyType).toBe('rsa');
        expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
        expect(keyOf(second)).not.toBe(keyOf(first));
      });

      it('takes the optional subdomains, selector and rotation interval', async () => {
        const name = uniqueDomain();
        const domain = await createDomain(app, newAccountId(), {
          domain: name,
          tracking_subdomain: 'Links',
          return_path_subdomain: `rp.${name}`,
          subscription_subdomain: 'preferences',
          media_subdomain: 'media',
          dkim_selector: ' Mail2026 ',
          dkim_rotation_interval_days: 45,
        });

        expect(domain).toMatchObject({
          tracking_subdomain: 'links',
          return_path_subdomain: 'rp',
          subscription_subdomain: 'preferences',
          media_subdomain: 'media',
          dkim_selector: 'mail2026',
          dkim_rotation_interval_days: 45,
        });
        expect(domain.dns_records.map((record) => [record.label, record.host])).toEqual([
          ['SPF', name],
          ['DKIM', `mail2026._domainkey.${name}`],
          ['DMARC', `_dmarc.${name}`],
          ['Return-Path', `rp.${name}`],
          ['Tracking', `links.${name}`],
          ['Subscription', `preferences.${name}`],
          ['Media', `media.${name}`],
          ['Inbound MX', name],
        ]);
      });

      it('treats an empty or blank selector as the default', async () => {
        const domain = await createDomain(app, newAccountId(), { dkim_selector: '  ' });

        expect(domain.dkim_selector).toBeNull();
        expect(recordOf(domain, 'DKIM').host).toMatch(/^envoi\._domainkey\./);
      });

      it.each(['localhost', 'exa_mple.com', '-bad.example.com', '1.2.3.4', 'a..b.com', ''])(
        'rejects the name %j',
        async (name) => {
          await expect(createDomain(app, newAccountId(), { domain: name })).rejects.toMatchObject({
            code: DomainsErrorCode.InvalidDomainName,
          });
        },
      );

      it.each([
        [{ tracking_subdomain: 'bad_label' }, DomainsErrorCode.InvalidSubdomain],
        [
          { tracking_subdomain: 'x', return_path_subdomain: 'X' },
          DomainsErrorCode.InvalidSubdomain,
        ],
        [{ media_subdomain: 'click' }, DomainsErrorCode.InvalidSubdomain],
        [{ dkim_selector: '-sel' }, DomainsErrorCode.InvalidDkimSelector],
        [{ dkim_selector: 'a.b' }, DomainsErrorCode.InvalidDkimSelector],
        [{ dkim_private_key: 'not a key' }, DomainsErrorCode.InvalidDkimPrivateKey],
      ])('rejects %j', async (body, code) => {
        await expect(createDomain(app, newAccountId(), body)).rejects.toMatchObject({ code });
      });

      it('rejects bad payloads with validation errors', async () => {
        await expect(
          app.rpc.request(DomainsSubjects.createDomain, {
            account_id: 'nope',
            body: { domain: 'x.example.test', dkim_rotation_interval_days: 5 },
          }),
        ).rejects.toMatchObject({
          code: CommonErrorCode.ValidationFailed,
          message: expect.stringContaining('account_id must be a UUID') as unknown,
        });
      });

      it('rejects a duplicate within the account, whatever its spelling, but not in another account', async () => {
        const accountId = newAccountId();
        const name = uniqueDomain();
        await createDomain(app, accountId, { domain: name });

        await expect(
          createDomain(app, accountId, { domain: `${name.toUpperCase()}.` }),
        ).rejects.toMatchObject({
          code: DomainsErrorCode.DomainAlreadyExists,
          message: 'domain already exists',
        });
        await expect(createDomain(app, newAccountId(), { domain: name })).resolves.toMatchObject({
          domain: name,
        });
      });

      it('settles concurrent duplicates with one success and conflicts', async () => {
        const accountId = newAccountId();
        const name = uniqueDomain();

        const results = await Promise.allSettled(
          Array.from({ length: 4 }, () => createDomain(app, accountId, { domain: name })),
        );

        expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
        for (const result of results) {
          if (result.status === 'rejected') {
            expect(result.reason).toMatchObject({ code: DomainsErrorCode.DomainAlreadyExists });
          }
        }
      });

      it('accepts a customer RSA key and publishes its public half', async () => {
        const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
        const domain = await createDomain(app, newAccountId(), {
          dkim_private_key: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
        });

        expect(recordOf(domain, 'DKIM').content).toBe(
          `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
        );
      });

      it('refuses customer keys that are not RSA or too small', async () => {
        const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
        const small = generateKeyPairSync('rsa', { modulusLength: 512 }).privateKey;
        for (const key of [ec, small]) {
          await expect(
            createDomain(app, newAccountId(), {
              dkim_private_key: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
            }),
          ).rejects.toMatchObject({ code: DomainsErrorCode.InvalidDkimPrivateKey });
        }
      });
    });

    describe('DKIM private key', () => {
      it('never appears in a record, and is encrypted at rest', async () => {
        const domain = await createDomain(app, newAccountId());
        const listed = await app.rpc.request(DomainsSubjects.listDomains, {
          account_id: domain.account_id,
          page: { limit: 10 },
        });
        const { private_key_pem: pem } = await app.rpc.request(
          DomainsSubjects.getDkimSigningKey,
          ref(domain),
        );
        const body = createPrivateKey(pem).export({ type: 'pkcs8', format: 'der' });

        for (const record of [
          domain,
          await app.rpc.request(DomainsSubjects.getDomain, ref(domain)),
          listed,
          await app.rpc.request(DomainsSubjects.authorizeSender, ref(domain)),
        ]) {
          const text = JSON.stringify(record);
          expect(text).not.toContain('PRIVATE KEY');
          expect(text).not.toContain(pem.split('\n')[1] ?? pem);
        }

        const [row] = await app.dataSource.query<Array<{ sealed: Buffer }>>(
          'SELECT dkim_private_key_sealed AS sealed FROM domains.domains WHERE id = $1',
          [domain.id],
        );
        expect(row?.sealed).toBeInstanceOf(Buffer);
        expect(row?.sealed.includes(Buffer.from('PRIVATE KEY'))).toBe(false);
        expect(row?.sealed.includes(body.subarray(0, 64))).toBe(false);
        expect(row?.sealed.includes(Buffer.from(pem.split('\n')[1] ?? 'x'))).toBe(false);
      });

      it('is not part of a sender authorization, which names the selector only', async () => {
        const domain = await createDomain(app, newAccountId());

        const authorization = await app.rpc.request(DomainsSubjects.authorizeSender, ref(domain));

        expect(authorization.dkim).toEqual({ selector: 'envoi', algorithm: 'rsa-sha256' });
        expect(JSON.stringify(authorization)).not.toMatch(/private|PRIVATE KEY/);
      });

      it('is answered, for its own domain only, by the signing-key request', async () => {
        const domain = await createDomain(app, newAccountId());
        const other = await createDomain(app, newAccountId());

        const key = await app.rpc.request(DomainsSubjects.getDkimSigningKey, {
          account_id: domain.account_id,
          domain: ` ${domain.domain.toUpperCase()}. `,
        });

        expect(key).toEqual({
          domain_id: domain.id,
          account_id: domain.account_id,
          domain: domain.domain,
          selector: 'envoi',
          algorithm: 'rsa-sha256',
          private_key_pem: expect.stringMatching(/^-----BEGIN PRIVATE KEY-----\n/) as unknown,
          version: (await app.rpc.request(DomainsSubjects.authorizeSender, ref(domain))).version,
          cache_ttl_ms: app.config.SENDER_CACHE_TTL_MS,
        });
        const notFound = { code: DomainsErrorCode.DomainNotFound };
        for (const request of [
          { account_id: other.account_id, domain: domain.domain },
          { account_id: domain.account_id, domain: other.domain },
          { account_id: domain.account_id, domain: 'not a host name' },
        ]) {
          await expect(
            app.rpc.request(DomainsSubjects.getDkimSigningKey, request),
          ).rejects.toMatchObject(notFound);
        }
      });

      it('signs what the published key verifies', async () => {
        const domain = await createDomain(app, newAccountId());
        const key = await app.rpc.request(DomainsSubjects.getDkimSigningKey, ref(domain));
        const published = /p=(.+)$/.exec(recordOf(domain, 'DKIM').content)?.[1] ?? '';
        const data = Buffer.from('DKIM-Signature test');

        const signature = sign('sha256', data, key.private_key_pem);

        expect(key).toMatchObject({ selector: 'envoi', algorithm: 'rsa-sha256' });
        expect(
          verify(
            'sha256',
            data,
            { key: Buffer.from(published, 'base64'), format: 'der', type: 'spki' },
            signature,
          ),
        ).toBe(true);
      });
    });

    describe('getDomain, listDomains', () => {
      it('finds a domain by its name in any spelling', async () => {
        const domain = await createDomain(app, newAccountId());

        await expect(
          app.rpc.request(DomainsSubjects.getDomain, {
            account_id: domain.account_id,
            domain: ` ${domain.domain.toUpperCase()}.`,
          }),
        ).resolves.toEqual(domain);
      });

      it('pages newest first and filters on dns_valid', async () => {
        const accountId = newAccountId();
        const created: DomainRecord[] = [];
        for (let i = 0; i < 3; i++) created.push(await createDomain(app, accountId));
        await app.dataSource.query('UPDATE domains.domains SET dns_valid = true WHERE id = $1', [
          created[1]?.id,
        ]);

        const first = await app.rpc.request(DomainsSubjects.listDomains, {
          account_id: accountId,
          page: { limit: 2 },
        });
        expect(first.data.map((domain) => domain.id)).toEqual([created[2]?.id, created[1]?.id]);
        expect(first).toMatchObject({ has_more: true, next_position: anyString });
        const second = await app.rpc.request(DomainsSubjects.listDomains, {
          account_id: accountId,
          page: { limit: 2, after: first.next_position },
        });
        expect(second.data.map((domain) => domain.id)).toEqual([created[0]?.id]);
        expect(second.has_more).toBe(false);

        const valid = await app.rpc.request(DomainsSubjects.listDomains, {
          account_id: accountId,
          dns_valid: true,
          page: { limit: 100 },
        });
        expect(valid.data.map((domain) => domain.id)).toEqual([created[1]?.id]);
        const invalid = await app.rpc.request(DomainsSubjects.listDomains, {
          account_id: accountId,
          dns_valid: false,
          page: { limit: 100 },
        });
        expect(invalid.data.map((domain) => domain.id)).toEqual([created[2]?.id, created[0]?.id]);
      });
    });

    describe('cross-account isolation', () => {
      it('hides a domain from every other account', async () => {
        const domain = await createDomain(app, newAccountId());
        const other = { account_id: newAccountId(), domain: domain.domain };
        const notFound = { code: DomainsErrorCode.DomainNotFound, message: 'domain not found' };

        await expect(app.rpc.request(DomainsSubjects.getDomain, other)).rejects.toMatchObject(
          notFound,
        );
        await expect(
          app.rpc.request(DomainsSubjects.updateDomain, {
            ...other,
            changes: { media_subdomain: 'm' },
          }),
        ).rejects.toMatchObject(notFound);
        await expect(app.rpc.request(DomainsSubjects.checkDns, other)).rejects.toMatchObject(
          notFound,
        );
        await expect(app.rpc.request(DomainsSubjects.authorizeSender, other)).rejects.toMatchObject(
          notFound,
        );
        await expect(app.rpc.request(DomainsSubjects.deleteDomain, other)).rejects.toMatchObject(
          notFound,
        );
        await expect(
          app.rpc.request(DomainsSubjects.listDomains, {
            account_id: other.account_id,
            page: { limit: 100 },
          }),
        ).resolves.toMatchObject({ data: [], has_more: false });
        await expect(
          app.rpc.request(DomainsSubjects.resolveDomains, {
            account_id: other.account_id,
            domains: [domain.domain],
          }),
        ).resolves.toEqual({ found: [], missing: [domain.domain] });
        await expect(app.rpc.request(DomainsSubjects.getDomain, ref(domain))).resolves.toEqual(
          domain,
        );
      });
    });

    describe('countDomains', () => {
      it('counts the domains of each account asked about, 0 for one with none', async () => {
        const two = newAccountId();
        const one = newAccountId();
        const none = newAccountId();
        await createDomain(app, two);
        const gone = await createDomain(app, two);
        await createDomain(app, two);
        await createDomain(app, one);
        await app.rpc.request(DomainsSubjects.deleteDomain, ref(gone));

        await expect(
          app.rpc.request(DomainsSubjects.countDomains, { account_ids: [two, one, none] }),
        ).resolves.toEqual({ counts: { [two]: 2, [one]: 1, [none]: 0 } });
        await expect(
          app.rpc.request(DomainsSubjects.countDomains, { account_ids: [] }),
        ).resolves.toEqual({ counts: {} });
      });

      it('refuses an id that is not a uuid', async () => {
        await expect(
          app.rpc.request(DomainsSubjects.countDomains, { account_ids: ['nope'] }),
        ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
      });
    });

    describe('updateDomain', () => {
      it('changes the provided fields only, and the records with them', async () => {
        const domain = await createDomain(app, newAccountId(), { media_subdomain: 'media' });

        const updated = await app.rpc.request(DomainsSubjects.updateDomain, {
          ...ref(domain),
          changes: {
            tracking_subdomain: 'Go',
            dkim_rotation_interval_days: 90,
            media_subdomain: null,
          },
        });

        expect(updated).toMatchObject({
          tracking_subdomain: 'go',
          media_subdomain: 'media',
          dkim_rotation_interval_days: 90,
          return_path_subdomain: null,
        });
        expect(recordOf(updated, 'Tracking').host).toBe(`go.${domain.domain}`);
        expect(updated.updated_at >= domain.updated_at).toBe(true);
        await expect(app.rpc.request(DomainsSubjects.getDomain, ref(domain))).resolves.toEqual(
          updated,
        );
      });

      it('sets and clears the selector override', async () => {
        const domain = await createDomain(app, newAccountId());
        const set = await app.rpc.request(DomainsSubjects.updateDomain, {
          ...ref(domain),
          changes: { dkim_selector: 'S1' },
        });
        expect(set.dkim_selector).toBe('s1');
        expect(recordOf(set, 'DKIM').host).toBe(`s1._domainkey.${domain.domain}`);

        const unchanged = await app.rpc.request(DomainsSubjects.updateDomain, {
          ...ref(domain),
          changes: { dkim_selector: null },
        });
        expect(unchanged.dkim_selector).toBe('s1');
        const cleared = await app.rpc.request(DomainsSubjects.updateDomain, {
          ...ref(domain),
          changes: { dkim_selector: '' },
        });
        expect(cleared.dkim_selector).toBeNull();
        expect(recordOf(cleared, 'DKIM').host).toBe(`envoi._domainkey.${domain.domain}`);
      });

      it('rejects subdomains that collide', async () => {
        const domain = await createDomain(app, newAccountId());

        await expect(
          app.rpc.request(DomainsSubjects.updateDomain, {
            ...ref(domain),
            changes: { return_path_subdomain: 'click' },
          }),
        ).rejects.toMatchObject({ code: DomainsErrorCode.InvalidSubdomain });
      });
    });

    describe('deleteDomain', () => {
      it('deletes, then announces it to caches and durably on the events stream', async () => {
        const domain = await createDomain(app, newAccountId());
        const broadcasts: unknown[] = [];
        const subscriptions = [DomainsSubjects.domainChanged, DomainsSubjects.domainDeleted].map(
          (subject) =>
            app.connection.subscribe(subject.name, {
              callback: (error, message) => {
                if (error) return;
                const packet = decodePacket<
                  NestEventPacket<DomainChangedEvent | DomainDeletedEvent>
                >(message.data);
                if (packet.data.domain_id === domain.id) broadcasts.push(packet);
              },
            }),
        );
        await app.connection.flush();

        try {
          await expect(app.rpc.request(DomainsSubjects.deleteDomain, ref(domain))).resolves.toEqual(
            {
              message: `domain ${domain.domain} deleted successfully`,
            },
          );
          await expect(
            app.rpc.request(DomainsSubjects.getDomain, ref(domain)),
          ).rejects.toMatchObject({
            code: DomainsErrorCode.DomainNotFound,
          });
          await pollUntil(
            () => broadcasts.length,
            (count) => count === 2,
            { what: 'the domain changed and deleted broadcasts' },
          );
          expect(broadcasts).toEqual(
            expect.arrayContaining([
              {
                pattern: DomainsSubjects.domainChanged.name,
                data: {
                  domain_id: domain.id,
                  account_id: domain.account_id,
                  domain: domain.domain,
                  version: 2,
                  reason: 'deleted',
                },
              },
              {
                pattern: DomainsSubjects.domainDeleted.name,
                data: {
                  domain_id: domain.id,
                  account_id: domain.account_id,
                  domain: domain.domain,
                  deleted_at: anyString,
                },
              },
            ]),
          );
          const durable = await pollUntil(
            async () =>
              (await streamMessages(app, DomainsStreamSubjects.deleted)).filter(
                (message) => message.event.data.domain_id === domain.id,
              ),
            (messages) => messages.length > 0,
            { what: 'the domain.deleted event on the stream' },
          );
          expect(durable).toEqual([
            {
              msgId: durable[0]?.event.id,
              event: {
                id: anyString,
                type: 'domain.deleted',
                timestamp: anyString,
                data: {
                  domain_id: domain.id,
                  domain: domain.domain,
                  account_id: domain.account_id,
                  deleted_at: anyString,
                },
              },
            },
          ]);
        } finally {
          for (const subscription of subscriptions) subscription.unsubscribe();
        }
      });

      it('lets the name be created again afterwards', async () => {
        const domain = await createDomain(app, newAccountId());
        await app.rpc.request(DomainsSubjects.deleteDomain, ref(domain));

        const again = await createDomain(app, domain.account_id, { domain: domain.domain });

        expect(again.id).not.toBe(domain.id);
      });
    });

    describe('resolveDomains', () => {
      it('tells owned names from the others, normalised, in request order', async () => {
        const accountId = newAccountId();
        const a = await createDomain(app, accountId);
        const b = await createDomain(app, accountId);

        await expect(
          app.rpc.request(DomainsSubjects.resolveDomains, {
            account_id: accountId,
            domains: [
              b.domain.toUpperCase(),
              'unknown.example.test',
              `${a.domain}.`,
              b.domain,
              'not a name',
            ],
          }),
        ).resolves.toEqual({
          found: [
            { domain: b.domain, domain_id: b.id },
            { domain: a.domain, domain_id: a.id },
          ],
          missing: ['unknown.example.test', 'not a name'],
        });
      });
    });

    describe('findOwners', () => {
      it('answers every account having the name, the oldest first, none for a non-hostname', async () => {
        const first = await createDomain(app, newAccountId());
        const second = await createDomain(app, newAccountId(), { domain: first.domain });

        await expect(
          app.rpc.request(DomainsSubjects.findOwners, { domain: `${first.domain.toUpperCase()}.` }),
        ).resolves.toEqual({
          owners: [
            { account_id: first.account_id, domain_id: first.id, dns_valid: false },
            { account_id: second.account_id, domain_id: second.id, dns_valid: false },
          ],
        });
        await expect(
          app.rpc.request(DomainsSubjects.findOwners, { domain: 'unknown.example.test' }),
        ).resolves.toEqual({ owners: [] });
        await expect(
          app.rpc.request(DomainsSubjects.findOwners, { domain: 'not a name' }),
        ).resolves.toEqual({ owners: [] });
      });
    });
  });
}
