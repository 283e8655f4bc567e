import { MxResolver, orderMxHosts, type RoutingDns } from './mx-resolver';

function dnsError(code: string): Error {
  return Object.assign(new Error(code), { code });
}

/** A zone in memory: MX, A and AAAA records by name; absent names answer NXDOMAIN. */
function fakeDns(zone: {
  mx?: Record<string, Array<{ exchange: string; priority: number }> | Error>;
  a?: Record<string, string[] | Error>;
  aaaa?: Record<string, string[] | Error>;
}): RoutingDns {
  const names = new Set([
    ...Object.keys(zone.mx ?? {}),
    ...Object.keys(zone.a ?? {}),
    ...Object.keys(zone.aaaa ?? {}),
  ]);
  const lookup =
    <T>(table: Record<string, T[] | Error> | undefined) =>
    (name: string): Promise<T[]> => {
      const value = table?.[name];
      if (value instanceof Error) return Promise.reject(value);
      if (value) return Promise.resolve(value);
      return Promise.reject(dnsError(names.has(name) ? 'ENODATA' : 'ENOTFOUND'));
    };
  return { resolveMx: lookup(zone.mx), resolve4: lookup(zone.a), resolve6: lookup(zone.aaaa) };
}

describe('orderMxHosts', () => {
  it('orders by preference, shuffles equal ones, and lists each host once', () => {
    const records = [
      { exchange: 'b.test', priority: 20 },
      { exchange: 'A.test.', priority: 10 },
      { exchange: 'c.test', priority: 20 },
      { exchange: 'a.test', priority: 30 },
    ];
    // Random keys in call order: b, a, c, a.
    const keys = [0.9, 0.5, 0.1, 0.2];
    let call = 0;
    expect(orderMxHosts(records, () => keys[call++] ?? 0)).toEqual(['a.test', 'c.test', 'b.test']);
  });

  it('recognises a null MX', () => {
    expect(orderMxHosts([{ exchange: '', priority: 0 }])).toBeNull();
    expect(orderMxHosts([{ exchange: '.', priority: 0 }])).toBeNull();
  });
});

describe('MxResolver', () => {
  it('routes to the MX hosts by preference with their addresses, IPv4 first', async () => {
    const resolver = new MxResolver(
      fakeDns({
        mx: {
          'dest.test': [
            { exchange: 'mx2.dest.test', priority: 20 },
            { exchange: 'mx1.dest.test', priority: 10 },
          ],
        },
        a: { 'mx1.dest.test': ['192.0.2.1'], 'mx2.dest.test': ['192.0.2.2'] },
        aaaa: { 'mx1.dest.test': ['2001:db8::1'] },
      }),
    );
    await expect(resolver.route('Dest.Test')).resolves.toEqual({
      kind: 'hosts',
      implicit: false,
      hosts: [
        { host: 'mx1.dest.test', addresses: ['192.0.2.1', '2001:db8::1'] },
        { host: 'mx2.dest.test', addresses: ['192.0.2.2'] },
      ],
    });
  });

  it('falls back to the A/AAAA records of the domain without MX (implicit MX)', async () => {
    const resolver = new MxResolver(fakeDns({ a: { 'plain.test': ['192.0.2.9'] } }));
    await expect(resolver.route('plain.test')).resolves.toEqual({
      kind: 'hosts',
      implicit: true,
      hosts: [{ host: 'plain.test', addresses: ['192.0.2.9'] }],
    });
  });

  it('skips MX hosts without an address', async () => {
    const resolver = new MxResolver(
      fakeDns({
        mx: {
          'dest.test': [
            { exchange: 'gone.dest.test', priority: 5 },
            { exchange: 'mx.dest.test', priority: 10 },
          ],
        },
        a: { 'mx.dest.test': ['192.0.2.3'] },
      }),
    );
    const route = await resolver.route('dest.test');
    expect(route).toMatchObject({ kind: 'hosts', hosts: [{ host: 'mx.dest.test' }] });
  });

  it('bounces a domain that does not exist, or has a null MX, or no address at all', async () => {
    const resolver = new MxResolver(
      fakeDns({
        mx: { 'nullmx.test': [{ exchange: '', priority: 0 }] },
        aaaa: { 'other.test': new Error('unused') },
      }),
    );
    await expect(resolver.route('nowhere.test')).resolves.toMatchObject({
      kind: 'permanent',
      reply: expect.stringMatching(/^550 5\.1\.2 /) as unknown,
    });
    await expect(resolver.route('nullmx.test')).resolves.toMatchObject({
      kind: 'permanent',
      reply: expect.stringMatching(/^556 5\.1\.10 /) as unknown,
    });
  });

  it('defers on lookup failures (SERVFAIL, timeouts) and MX hosts that do not resolve', async () => {
    const resolver = new MxResolver(
      fakeDns({
        mx: {
          'broken.test': dnsError('ESERVFAIL'),
          'dangling.test': [{ exchange: 'nothing.test', priority: 10 }],
        },
        a: { 'slow.test': dnsError('ETIMEOUT') },
      }),
    );
    await expect(resolver.route('broken.test')).resolves.toMatchObject({ kind: 'transient' });
    await expect(resolver.route('dangling.test')).resolves.toMatchObject({ kind: 'transient' });
  });
});
