import { createPublicKey } from 'node:crypto';

import { type DomainRecord, DomainsErrorCode, DomainsSubjects } from '@envoi/contracts-domains';
import type { DnsTestRecord } from '@envoi/shared-testing';

import {
  checkDns,
  createDomain,
  type DomainsTestApp,
  expireCheckCache,
  getDomain,
  newAccountId,
  publish,
  recordOf,
  runPeriodicCheck,
} from '../domains-test-app';

const REQUIRED = ['SPF', 'DKIM', 'DMARC'];

function propagation(domain: DomainRecord): Record<string, boolean> {
  return Object.fromEntries(
    domain.dns_records.map((record) => [record.label ?? record.host, record.propagated]),
  );
}

function publicKeyOf(domain: DomainRecord): string {
  return /p=(.+)$/.exec(recordOf(domain, 'DKIM').content)?.[1] ?? '';
}

export function dnsChecksSuite(getApp: () => DomainsTestApp): void {
  describe('domains service: DNS checks', () => {
    let app: DomainsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    async function newDomain(): Promise<DomainRecord> {
      return createDomain(app, newAccountId());
    }

    it('validates a domain whose records are all published', async () => {
      const domain = await newDomain();
      publish(app, domain);
      const before = Date.now();

      const checked = await checkDns(app, domain);

      expect(checked.dns_valid).toBe(true);
      expect(checked.dns_records.every((record) => record.propagated)).toBe(true);
      expect(Date.parse(checked.last_dns_check_at ?? '')).toBeGreaterThanOrEqual(before - 1_000);
      await expect(getDomain(app, domain)).resolves.toEqual(checked);
    });

    it('is valid with only the required records', async () => {
      const domain = await newDomain();
      publish(app, domain, ['Return-Path', 'Tracking', 'Inbound MX']);

      const checked = await checkDns(app, domain);

      expect(checked.dns_valid).toBe(true);
      expect(propagation(checked)).toEqual({
        SPF: true,
        DKIM: true,
        DMARC: true,
        'Return-Path': false,
        Tracking: false,
        'Inbound MX': false,
      });
    });

    it.each(REQUIRED)('is invalid without the %s record', async (label) => {
      const domain = await newDomain();
      publish(app, domain, [label]);

      const checked = await checkDns(app, domain);

      expect(checked.dns_valid).toBe(false);
      expect(recordOf(checked, label).propagated).toBe(false);
      for (const other of REQUIRED.filter((candidate) => candidate !== label)) {
        expect(recordOf(checked, other).propagated).toBe(true);
      }
    });

    const wrongRecords: Array<[string, DnsTestRecord, (domain: DomainRecord) => string]> = [
      ['SPF', { type: 'TXT', value: 'v=spf1 include:spf.other.test ~all' }, (d) => d.domain],
      ['SPF', { type: 'TXT', value: 'spf.envoi.test' }, (d) => d.domain],
      ['DMARC', { type: 'TXT', value: 'v=spf1 -all' }, (d) => `_dmarc.${d.domain}`],
      [
        'Return-Path',
        { type: 'CNAME', target: 'bounces.other.test' },
        (d) => recordOf(d, 'Return-Path').host,
      ],
      ['Tracking', { type: 'A', address: '192.0.2.10' }, (d) => recordOf(d, 'Tracking').host],
    ];

    it.each(wrongRecords)('finds a wrong %s record', async (label, wrong, host) => {
      const domain = await newDomain();
      publish(app, domain, [label]);
      const keep: DnsTestRecord[] =
        label === 'SPF' ? [{ type: 'MX', exchange: 'mx.envoi.test', priority: 10 }] : [];
      app.dns.set(host(domain), [...keep, wrong]);

      const checked = await checkDns(app, domain);

      expect(recordOf(checked, label).propagated).toBe(false);
      expect(checked.dns_valid).toBe(!REQUIRED.includes(label));
    });

    it('finds a DKIM record with another key, and a wrong MX', async () => {
      const domain = await newDomain();
      const other = await newDomain();
      publish(app, domain, ['DKIM', 'Inbound MX']);
      app.dns.set(recordOf(domain, 'DKIM').host, [
        { type: 'TXT', value: recordOf(other, 'DKIM').content },
      ]);
      app.dns.add(domain.domain, { type: 'MX', exchange: 'mx.other.test', priority: 10 });

      const checked = await checkDns(app, domain);

      expect(propagation(checked)).toMatchObject({ DKIM: false, 'Inbound MX': false });
      expect(checked.dns_valid).toBe(false);
    });

    it('accepts an SPF record merged with other includes, directly or through a nested include', async () => {
      const direct = await newDomain();
      publish(app, direct, ['SPF']);
      app.dns.add(direct.domain, {
        type: 'TXT',
        value: 'v=spf1 ip4:192.0.2.0/24 include:_spf.google.com include:SPF.Envoi.Test. -all',
      });
      app.dns.add(direct.domain, { type: 'TXT', value: 'google-site-verification=abc' });

      const nested = await newDomain();
      publish(app, nested, ['SPF']);
      app.dns.add(nested.domain, {
        type: 'TXT',
        value: `v=spf1 include:_spf.${nested.domain} ~all`,
      });
      app.dns.set(`_spf.${nested.domain}`, [
        { type: 'TXT', value: 'v=spf1 include:mailgun.org include:spf.envoi.test ~all' },
      ]);

      await expect(checkDns(app, direct)).resolves.toMatchObject({ dns_valid: true });
      await expect(checkDns(app, nested)).resolves.toMatchObject({ dns_valid: true });
    });

    it('counts only v=spf1 records, and refuses two SPF records', async () => {
      const notSpf = await newDomain();
      publish(app, notSpf, ['SPF']);
      app.dns.add(notSpf.domain, { type: 'TXT', value: 'v=spf10 include:spf.envoi.test ~all' });
      const twoSpf = await newDomain();
      publish(app, twoSpf);
      app.dns.add(twoSpf.domain, { type: 'TXT', value: 'v=spf1 include:other.test ~all' });

      expect(recordOf(await checkDns(app, notSpf), 'SPF').propagated).toBe(false);
      expect(recordOf(await checkDns(app, twoSpf), 'SPF').propagated).toBe(false);
    });

    it('follows CNAME chains to the DKIM key, the return-path and the DMARC record', async () => {
      const domain = await newDomain();
      publish(app, domain, ['DKIM', 'Return-Path', 'DMARC']);
      const dkim = recordOf(domain, 'DKIM');
      app.dns.set(dkim.host, [{ type: 'CNAME', target: `hop1.${domain.domain}` }]);
      app.dns.set(`hop1.${domain.domain}`, [{ type: 'CNAME', target: 'keys.provider.test' }]);
      app.dns.set('keys.provider.test', [{ type: 'TXT', value: dkim.content }]);
      app.dns.set(recordOf(domain, 'Return-Path').host, [
        { type: 'CNAME', target: `rp-alias.${domain.domain}` },
      ]);
      app.dns.set(`rp-alias.${domain.domain}`, [{ type: 'CNAME', target: 'BOUNCES.envoi.test.' }]);
      app.dns.set(`_dmarc.${domain.domain}`, [{ type: 'CNAME', target: 'dmarc.provider.test' }]);
      app.dns.set('dmarc.provider.test', [{ type: 'TXT', value: 'v=DMARC1; p=none' }]);

      const checked = await checkDns(app, domain);

      expect(propagation(checked)).toMatchObject({ DKIM: true, 'Return-Path': true, DMARC: true });
      expect(checked.dns_valid).toBe(true);
    });

    it('gives up on CNAME loops', async () => {
      const domain = await newDomain();
      publish(app, domain, ['Tracking']);
      const host = recordOf(domain, 'Tracking').host;
      app.dns.set(host, [{ type: 'CNAME', target: `loop.${domain.domain}` }]);
      app.dns.set(`loop.${domain.domain}`, [{ type: 'CNAME', target: host }]);

      const checked = await checkDns(app, domain);

      expect(recordOf(checked, 'Tracking').propagated).toBe(false);
      expect(checked.dns_valid).toBe(true);
    });

    it.each([
      [
        'split into several strings',
        // Each string of a TXT record holds at most 255 characters.
        (key: string) => [
          'v=DKIM1; k=rsa; ',
          `p=${key.slice(0, 100)}`,
          key.slice(100, 300),
          key.slice(300),
        ],
      ],
      [
        'with spaces inside the key',
        (key: string) =>
          `v=DKIM1;k=rsa;p=${key.slice(0, 50)} ${key.slice(50, 120)}\t${key.slice(120)}`,
      ],
      ['with literal quotes', (key: string) => `"v=DKIM1; k=rsa; " "p=${key}"`],
      ['with tags in another order and no version', (key: string) => `k=rsa; t=s; p=${key} ;`],
      [
        'as a PKCS#1 key',
        (key: string) =>
          `v=DKIM1; p=${createPublicKey({
            key: Buffer.from(key, 'base64'),
            format: 'der',
            type: 'spki',
          })
            .export({ type: 'pkcs1', format: 'der' })
            .toString('base64')}`,
      ],
    ])('compares DKIM by key material: %s', async (_name, format) => {
      const domain = await newDomain();
      publish(app, domain, ['DKIM']);
      app.dns.set(recordOf(domain, 'DKIM').host, [
        { type: 'TXT', value: format(publicKeyOf(domain)) },
      ]);

      const checked = await checkDns(app, domain);

      expect(recordOf(checked, 'DKIM').propagated).toBe(true);
      expect(checked.dns_valid).toBe(true);
    });

    it.each([
      ['a revoked key', () => 'v=DKIM1; k=rsa; p='],
      ['a truncated key', (key: string) => `v=DKIM1; k=rsa; p=${key.slice(0, -20)}`],
      ['another key type', (key: string) => `v=DKIM1; k=ed25519; p=${key}`],
    ])('refuses DKIM with %s', async (_name, format) => {
      const domain = await newDomain();
      publish(app, domain, ['DKIM']);
      app.dns.set(recordOf(domain, 'DKIM').host, [
        { type: 'TXT', value: format(publicKeyOf(domain)) },
      ]);

      expect(recordOf(await checkDns(app, domain), 'DKIM').propagated).toBe(false);
    });

    it('answers from the last check within 60 seconds, then checks again', async () => {
      const domain = await newDomain();
      publish(app, domain);
      const first = await checkDns(app, domain);
      app.dns.remove(`_dmarc.${domain.domain}`);

      await expect(checkDns(app, domain)).resolves.toEqual(first);

      await expireCheckCache(app, domain);
      const second = await checkDns(app, domain);
      expect(second.dns_valid).toBe(false);
      expect(recordOf(second, 'DMARC').propagated).toBe(false);
      expect(second.last_dns_check_at).not.toBe(first.last_dns_check_at);
    });

    it('is unavailable when no lookup gets an answer, and changes nothing', async () => {
      const domain = await newDomain();
      for (const record of domain.dns_records) app.dns.fail(record.host, 'timeout');

      await expect(checkDns(app, domain)).rejects.toMatchObject({
        code: DomainsErrorCode.DnsCheckUnavailable,
      });
      await expect(getDomain(app, domain)).resolves.toEqual(domain);
      for (const record of domain.dns_records) app.dns.heal(record.host);
    });

    it.each(['timeout', 'servfail'] as const)(
      'keeps what it knew about a record whose lookup fails with %s',
      async (failure) => {
        const domain = await newDomain();
        publish(app, domain);
        const valid = await checkDns(app, domain);
        const dkimHost = recordOf(domain, 'DKIM').host;
        app.dns.fail(dkimHost, failure);
        app.dns.remove(recordOf(domain, 'Tracking').host);

        await expireCheckCache(app, domain);
        const checked = await checkDns(app, domain);

        expect(checked.dns_valid).toBe(true);
        expect(propagation(checked)).toMatchObject({ DKIM: true, Tracking: false });
        expect(Date.parse(checked.last_dns_check_at ?? '')).toBeGreaterThan(
          Date.parse(valid.last_dns_check_at ?? ''),
        );
        app.dns.heal(dkimHost);
      },
    );

    it('locks a subdomain once its record verified, and the selector once DKIM did', async () => {
      const domain = await createDomain(app, newAccountId(), {
        tracking_subdomain: 'links',
        dkim_selector: 's1',
      });
      publish(app, domain, ['Return-Path']);
      await checkDns(app, domain);
      const update = (changes: Record<string, string>) =>
        app.rpc.request(DomainsSubjects.updateDomain, {
          account_id: domain.account_id,
          domain: domain.domain,
          changes,
        });

      await expect(update({ tracking_subdomain: 'go' })).rejects.toMatchObject({
        code: DomainsErrorCode.SubdomainLocked,
        message: 'tracking_subdomain is locked: its DNS record has been verified',
      });
      await expect(update({ dkim_selector: 's2' })).rejects.toMatchObject({
        code: DomainsErrorCode.DkimSelectorLocked,
      });
      await expect(update({ dkim_selector: '' })).rejects.toMatchObject({
        code: DomainsErrorCode.DkimSelectorLocked,
      });
      await expect(update({ tracking_subdomain: 'LINKS' })).resolves.toMatchObject({
        tracking_subdomain: 'links',
      });
      // The return-path never verified: it can still move.
      await expect(update({ return_path_subdomain: 'rp' })).resolves.toMatchObject({
        return_path_subdomain: 'rp',
      });
    });

    it('tells senders whether a domain may send, with the hosts that verified', async () => {
      const domain = await newDomain();
      const ref = { account_id: domain.account_id, domain: domain.domain.toUpperCase() };
      await expect(app.rpc.request(DomainsSubjects.authorizeSender, ref)).resolves.toMatchObject({
        domain_id: domain.id,
        dns_valid: false,
        return_path_host: null,
        tracking_host: null,
        version: 1,
        cache_ttl_ms: app.config.SENDER_CACHE_TTL_MS,
      });

      publish(app, domain, ['Tracking']);
      await checkDns(app, domain);

      await expect(app.rpc.request(DomainsSubjects.authorizeSender, ref)).resolves.toMatchObject({
        domain_id: domain.id,
        account_id: domain.account_id,
        domain: domain.domain,
        dns_valid: true,
        return_path_host: recordOf(domain, 'Return-Path').host,
        tracking_host: null,
        version: 2,
      });
    });

    it("tells the MX whether a host is a domain's verified return-path host", async () => {
      const domain = await newDomain();
      const host = recordOf(domain, 'Return-Path').host;
      const match = (name: string) =>
        app.rpc.request(DomainsSubjects.matchReturnPathHost, { host: name });
      const unverified = { verified: false, cache_ttl_ms: app.config.SENDER_CACHE_TTL_MS };
      await expect(match(host)).resolves.toEqual(unverified);

      publish(app, domain);
      await checkDns(app, domain);

      await expect(match(host.toUpperCase())).resolves.toEqual({
        verified: true,
        cache_ttl_ms: app.config.SENDER_CACHE_TTL_MS,
      });
      await expect(match(`other.${domain.domain}`)).resolves.toEqual(unverified);
      await expect(match(domain.domain)).resolves.toEqual(unverified);
      await expect(match('not a host')).resolves.toEqual(unverified);
    });

    it('re-checks a domain periodically, keeping it valid through a resolver timeout', async () => {
      const domain = await newDomain();
      publish(app, domain);
      await checkDns(app, domain);
      app.dns.fail(domain.domain, 'timeout');

      try {
        await runPeriodicCheck(app, domain);
        const checked = await getDomain(app, domain);
        expect(checked.dns_valid).toBe(true);
        expect(recordOf(checked, 'SPF').propagated).toBe(true);
      } finally {
        app.dns.heal(domain.domain);
      }
    });
  });
}
