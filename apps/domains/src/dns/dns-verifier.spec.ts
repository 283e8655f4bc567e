import type { ExpectedRecord } from '../domains/dns-records';
import type { DnsClient } from './dns-client';
import { DnsLookup, sameHost } from './dns-lookup';
import { DnsVerifier, SPF_LOOKUP_LIMIT } from './dns-verifier';

type Zone = Record<string, { txt?: string[]; cname?: string; mx?: string[]; error?: string }>;

function dnsError(code: string): Error {
  return Object.assign(new Error(code), { code });
}

/**
 * A resolver answering from a zone without chasing CNAMEs (as when an answer holds only the
 * alias), so that the verifier's own chain following is exercised.
 */
function fakeClient(zone: Zone): DnsClient & { queries: string[] } {
  const queries: string[] = [];
  const entry = (name: string) => {
    queries.push(name);
    const found = zone[name];
    if (found?.error) throw dnsError(found.error);
    if (!found) throw dnsError('ENOTFOUND');
    return found;
  };
  /** Runs `answer` as a resolver would: its throw becomes the rejection. */
  const settle = <T>(answer: () => T): Promise<T> => new Promise((resolve) => resolve(answer()));
  return {
    queries,
    resolveTxt: (name) =>
      settle(() => {
        const found = entry(name);
        if (!found.txt) throw dnsError('ENODATA');
        return found.txt.map((txt) => [txt]);
      }),
    resolveCname: (name) =>
      settle(() => {
        const found = entry(name);
        if (!found.cname) throw dnsError('ENODATA');
        return [found.cname];
      }),
    resolveMx: (name) =>
      settle(() => {
        const found = entry(name);
        if (!found.mx) throw dnsError('ENODATA');
        return found.mx.map((exchange) => ({ exchange, priority: 10 }));
      }),
  };
}

function record(verification: ExpectedRecord['verification'], host: string): ExpectedRecord {
  return { key: 'spf', type: 'TXT', label: 'x', host, content: '', required: true, verification };
}

const spf = (host: string) => record({ kind: 'spf', include: 'spf.envoi.test' }, host);

describe('DnsVerifier', () => {
  it('follows a CNAME chain the resolver did not chase, to TXT and MX records', async () => {
    const client = fakeClient({
      'sel._domainkey.a.test': { cname: 'hop.a.test' },
      'hop.a.test': { cname: 'key.provider.test' },
      'key.provider.test': { txt: ['v=DMARC1; p=none'] },
      'mx.a.test': { cname: 'mail.a.test' },
      'mail.a.test': { mx: ['MX.Envoi.Test.'] },
    });
    const verifier = new DnsVerifier(new DnsLookup(client));

    await expect(new DnsLookup(client).txt('sel._domainkey.a.test')).resolves.toEqual({
      kind: 'found',
      records: ['v=DMARC1; p=none'],
    });
    await expect(
      verifier.verify(record({ kind: 'mx', exchange: 'mx.envoi.test' }, 'mx.a.test')),
    ).resolves.toEqual({ status: 'pass' });
  });

  it('stops at CNAME loops and after the depth limit', async () => {
    const zone: Zone = { 'a.test': { cname: 'b.test' }, 'b.test': { cname: 'a.test' } };
    for (let i = 0; i < 20; i++) zone[`c${i}.test`] = { cname: `c${i + 1}.test` };
    const lookup = new DnsLookup(fakeClient(zone), 8);

    await expect(lookup.txt('a.test')).resolves.toEqual({ kind: 'absent' });
    await expect(lookup.cnameChain('a.test')).resolves.toEqual({
      kind: 'found',
      records: ['b.test', 'a.test'],
    });
    const chain = await lookup.cnameChain('c0.test');
    expect(chain.kind === 'found' && chain.records).toHaveLength(8);
  });

  it('bounds nested SPF lookups', async () => {
    const zone: Zone = {};
    for (let i = 0; i < 30; i++)
      zone[`n${i}.test`] = { txt: [`v=spf1 include:n${i + 1}.test -all`] };
    const client = fakeClient(zone);

    await expect(
      new DnsVerifier(new DnsLookup(client)).verify(spf('n0.test')),
    ).resolves.toMatchObject({
      status: 'fail',
    });
    expect(client.queries).toHaveLength(SPF_LOOKUP_LIMIT + 1);
  });

  it('reports a nested SPF lookup that timed out as transient, not as a failure', async () => {
    const verifier = new DnsVerifier(
      new DnsLookup(
        fakeClient({
          'a.test': { txt: ['v=spf1 include:_spf.a.test -all'] },
          '_spf.a.test': { error: 'ETIMEOUT' },
        }),
      ),
    );

    await expect(verifier.verify(spf('a.test'))).resolves.toEqual({
      status: 'transient',
      reason: '_spf.a.test: ETIMEOUT',
    });
  });

  it.each([
    ['ETIMEOUT', 'transient'],
    ['ESERVFAIL', 'transient'],
    ['ECONNREFUSED', 'transient'],
    ['EREFUSED', 'transient'],
    ['ENOTFOUND', 'fail'],
    ['ENODATA', 'fail'],
  ])('takes %s as %s', async (code, status) => {
    const verifier = new DnsVerifier(new DnsLookup(fakeClient({ 'a.test': { error: code } })));

    await expect(verifier.verify(spf('a.test'))).resolves.toMatchObject({ status });
  });

  it('walks up to the parent domain for DMARC', async () => {
    const verifier = new DnsVerifier(
      new DnsLookup(fakeClient({ '_dmarc.example.test': { txt: ['v=DMARC1; p=reject'] } })),
    );

    await expect(
      verifier.verify(
        record({ kind: 'dmarc', domain: 'mail.example.test' }, '_dmarc.mail.example.test'),
      ),
    ).resolves.toEqual({ status: 'pass' });
  });

  it('compares hosts without case or trailing dot', () => {
    expect(sameHost('Bounces.Envoi.Test.', 'bounces.envoi.test')).toBe(true);
    expect(sameHost('bounces.envoi.test', 'bounces.envoi.tes')).toBe(false);
  });
});
