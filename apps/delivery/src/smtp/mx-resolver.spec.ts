import {
  type AddressRecord,
  MIN_ROUTE_TTL_MS,
  MxResolver,
  orderMxHosts,
  type RoutingDns,
} from './mx-resolver';

function dnsError(code: string): Error {
  return Object.assign(new Error(code), { code });
}

type AddressEntry = string | AddressRecord;

/** Addresses given as bare strings have this TTL (seconds). */
const DEFAULT_TTL = 3_600;

interface FakeZone {
  mx?: Record<string, Array<{ exchange: string; priority: number }> | Error>;
  a?: Record<string, AddressEntry[] | Error>;
  aaaa?: Record<string, AddressEntry[] | Error>;
}

/**
 * A zone in memory: MX, A and AAAA records by name (read at each query, so tests can change it);
 * absent names answer NXDOMAIN. Each lookup is a jest.fn, to count the queries.
 */
function fakeDns(zone: FakeZone) {
  const names = () =>
    new Set([
      ...Object.keys(zone.mx ?? {}),
      ...Object.keys(zone.a ?? {}),
      ...Object.keys(zone.aaaa ?? {}),
    ]);
  const lookup =
    <T, R>(table: () => Record<string, T[] | Error> | undefined, map: (entry: T) => R) =>
    (name: string): Promise<R[]> => {
      const value = table()?.[name];
      if (value instanceof Error) return Promise.reject(value);
      if (value) return Promise.resolve(value.map(map));
      return Promise.reject(dnsError(names().has(name) ? 'ENODATA' : 'ENOTFOUND'));
    };
  const address = (entry: AddressEntry): AddressRecord =>
    typeof entry === 'string' ? { address: entry, ttl: DEFAULT_TTL } : entry;
  return {
    resolveMx: jest.fn(
      lookup(
        () => zone.mx,
        (record) => record,
      ),
    ),
    resolve4: jest.fn(lookup(() => zone.a, address)),
    resolve6: jest.fn(lookup(() => zone.aaaa, address)),
  } satisfies RoutingDns;
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((ok) => {
    resolve = ok;
  });
  return { promise, resolve };
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

describe('MxResolver cache', () => {
  const MAX_TTL_MS = 300_000;
  const NEGATIVE_TTL_MS = 60_000;
  let now = 0;
  const clock = () => now;

  beforeEach(() => {
    now = 1_000_000;
  });

  function cachingResolver(
    dns: RoutingDns,
    cache: { maxTtlMs?: number; maxEntries?: number } = {},
  ) {
    return new MxResolver(dns, {
      cache: {
        maxTtlMs: cache.maxTtlMs ?? MAX_TTL_MS,
        negativeTtlMs: NEGATIVE_TTL_MS,
        maxEntries: cache.maxEntries ?? 100,
      },
      now: clock,
    });
  }

  /** A domain with one MX host, whose A and AAAA records have these TTLs (seconds). */
  function oneMx(domain: string, ttl4: number, ttl6: number): FakeZone {
    return {
      mx: { [domain]: [{ exchange: `mx.${domain}`, priority: 10 }] },
      a: { [`mx.${domain}`]: [{ address: '192.0.2.1', ttl: ttl4 }] },
      aaaa: { [`mx.${domain}`]: [{ address: '2001:db8::1', ttl: ttl6 }] },
    };
  }

  const hostsRoute = {
    kind: 'hosts',
    implicit: false,
    hosts: [{ host: 'mx.dest.test', addresses: ['192.0.2.1', '2001:db8::1'] }],
  };

  it('reuses a route for the smallest TTL of its address records, then asks again', async () => {
    const dns = fakeDns(oneMx('dest.test', 60, 30));
    const resolver = cachingResolver(dns);

    await expect(resolver.route('dest.test')).resolves.toEqual(hostsRoute);
    now += 29_999;
    await expect(resolver.route('DEST.test.')).resolves.toEqual(hostsRoute);
    expect(dns.resolveMx).toHaveBeenCalledTimes(1);
    expect(dns.resolve4).toHaveBeenCalledTimes(1);
    expect(dns.resolve6).toHaveBeenCalledTimes(1);

    now += 1;
    await expect(resolver.route('dest.test')).resolves.toEqual(hostsRoute);
    expect(dns.resolveMx).toHaveBeenCalledTimes(2);
    expect(dns.resolve4).toHaveBeenCalledTimes(2);
  });

  it('keeps a route no longer than the maximum (which stands in for the MX TTL)', async () => {
    const dns = fakeDns(oneMx('dest.test', 86_400, 86_400));
    const resolver = cachingResolver(dns);

    await resolver.route('dest.test');
    now += MAX_TTL_MS - 1;
    await resolver.route('dest.test');
    expect(dns.resolveMx).toHaveBeenCalledTimes(1);
    now += 1;
    await resolver.route('dest.test');
    expect(dns.resolveMx).toHaveBeenCalledTimes(2);
  });

  it('keeps a route with 0-TTL records for the floor, not for nothing', async () => {
    const dns = fakeDns(oneMx('dest.test', 0, 300));
    const resolver = cachingResolver(dns);

    await resolver.route('dest.test');
    now += MIN_ROUTE_TTL_MS - 1;
    await resolver.route('dest.test');
    expect(dns.resolveMx).toHaveBeenCalledTimes(1);
    now += 1;
    await resolver.route('dest.test');
    expect(dns.resolveMx).toHaveBeenCalledTimes(2);
  });

  it('shuffles MX hosts of equal preference on every route, cached or not', async () => {
    const dns = fakeDns({
      mx: {
        'dest.test': [
          { exchange: 'a.dest.test', priority: 10 },
          { exchange: 'b.dest.test', priority: 10 },
        ],
      },
      a: { 'a.dest.test': ['192.0.2.1'], 'b.dest.test': ['192.0.2.2'] },
    });
    // Random keys in call order; a route draws one per MX record.
    const keys = [0.1, 0.9, 0.1, 0.9, 0.9, 0.1];
    let call = 0;
    const resolver = new MxResolver(dns, {
      cache: { maxTtlMs: MAX_TTL_MS, negativeTtlMs: NEGATIVE_TTL_MS, maxEntries: 10 },
      random: () => keys[call++] ?? 0,
      now: clock,
    });
    const hosts = async () =>
      ((await resolver.route('dest.test')) as { hosts: Array<{ host: string }> }).hosts.map(
        (host) => host.host,
      );

    await expect(hosts()).resolves.toEqual(['a.dest.test', 'b.dest.test']);
    await expect(hosts()).resolves.toEqual(['b.dest.test', 'a.dest.test']);
    expect(dns.resolveMx).toHaveBeenCalledTimes(1);
  });

  it('hands out copies: a caller changing its route does not change the cached one', async () => {
    const resolver = cachingResolver(fakeDns(oneMx('dest.test', 60, 60)));

    const first = await resolver.route('dest.test');
    if (first.kind === 'hosts') first.hosts[0]?.addresses.splice(0);
    await expect(resolver.route('dest.test')).resolves.toEqual(hostsRoute);
  });

  it('keeps permanent answers for the negative TTL', async () => {
    const zone: FakeZone = { mx: { 'nullmx.test': [{ exchange: '', priority: 0 }] } };
    const dns = fakeDns(zone);
    const resolver = cachingResolver(dns);

    for (const domain of ['nowhere.test', 'nullmx.test']) {
      await expect(resolver.route(domain)).resolves.toMatchObject({ kind: 'permanent' });
    }
    // Published meanwhile: still bounced until the negative answers expire.
    zone.mx = oneMx('nowhere.test', 3_600, 3_600).mx;
    zone.a = oneMx('nowhere.test', 3_600, 3_600).a;
    now += NEGATIVE_TTL_MS - 1;
    await expect(resolver.route('nowhere.test')).resolves.toMatchObject({ kind: 'permanent' });
    await expect(resolver.route('nullmx.test')).resolves.toMatchObject({ kind: 'permanent' });
    expect(dns.resolveMx).toHaveBeenCalledTimes(2);

    now += 1;
    await expect(resolver.route('nowhere.test')).resolves.toMatchObject({ kind: 'hosts' });
    expect(dns.resolveMx).toHaveBeenCalledTimes(3);
  });

  it('keeps a negative answer no longer than the maximum TTL', async () => {
    const dns = fakeDns({});
    const resolver = cachingResolver(dns, { maxTtlMs: 5_000 });

    await resolver.route('nowhere.test');
    now += 5_000;
    await resolver.route('nowhere.test');
    expect(dns.resolveMx).toHaveBeenCalledTimes(2);
  });

  it('keeps an implicit MX route no longer than the negative TTL (its MX answer was NODATA)', async () => {
    const dns = fakeDns({ a: { 'plain.test': ['192.0.2.9'] } });
    const resolver = cachingResolver(dns);

    await expect(resolver.route('plain.test')).resolves.toMatchObject({ implicit: true });
    now += NEGATIVE_TTL_MS - 1;
    await resolver.route('plain.test');
    expect(dns.resolveMx).toHaveBeenCalledTimes(1);
    now += 1;
    await resolver.route('plain.test');
    expect(dns.resolveMx).toHaveBeenCalledTimes(2);
  });

  it('never keeps lookup failures', async () => {
    const zone: FakeZone = {
      mx: { 'broken.test': dnsError('ESERVFAIL') },
      a: { 'slow.test': dnsError('ETIMEOUT') },
    };
    const dns = fakeDns(zone);
    const resolver = cachingResolver(dns);

    await expect(resolver.route('broken.test')).resolves.toMatchObject({ kind: 'transient' });
    await expect(resolver.route('slow.test')).resolves.toMatchObject({ kind: 'transient' });
    zone.mx = oneMx('broken.test', 60, 60).mx;
    zone.a = { ...oneMx('broken.test', 60, 60).a, 'slow.test': ['192.0.2.7'] };

    await expect(resolver.route('broken.test')).resolves.toMatchObject({ kind: 'hosts' });
    await expect(resolver.route('slow.test')).resolves.toMatchObject({ kind: 'hosts' });
  });

  it('never keeps a route that a failed lookup left incomplete', async () => {
    const zone: FakeZone = {
      mx: {
        'dest.test': [
          { exchange: 'mx1.dest.test', priority: 10 },
          { exchange: 'mx2.dest.test', priority: 20 },
        ],
        'half.test': [{ exchange: 'mx.half.test', priority: 10 }],
      },
      a: {
        'mx1.dest.test': dnsError('ETIMEOUT'),
        'mx2.dest.test': ['192.0.2.2'],
        'mx.half.test': ['192.0.2.3'],
      },
      aaaa: { 'mx.half.test': dnsError('ESERVFAIL') },
    };
    const dns = fakeDns(zone);
    const resolver = cachingResolver(dns);

    await expect(resolver.route('dest.test')).resolves.toMatchObject({
      hosts: [{ host: 'mx2.dest.test' }],
    });
    await expect(resolver.route('half.test')).resolves.toMatchObject({
      hosts: [{ host: 'mx.half.test', addresses: ['192.0.2.3'] }],
    });
    await resolver.route('dest.test');
    await resolver.route('half.test');
    expect(dns.resolveMx).toHaveBeenCalledTimes(4);
  });

  it('shares one lookup between concurrent routes of a domain', async () => {
    const answer = deferred<Array<{ exchange: string; priority: number }>>();
    const dns = fakeDns(oneMx('dest.test', 60, 60));
    dns.resolveMx.mockImplementationOnce(() => answer.promise);
    const resolver = cachingResolver(dns);

    const routes = Promise.all([
      resolver.route('dest.test'),
      resolver.route('Dest.Test'),
      resolver.route('dest.test.'),
    ]);
    answer.resolve([{ exchange: 'mx.dest.test', priority: 10 }]);

    await expect(routes).resolves.toEqual([hostsRoute, hostsRoute, hostsRoute]);
    expect(dns.resolveMx).toHaveBeenCalledTimes(1);
    expect(dns.resolve4).toHaveBeenCalledTimes(1);
  });

  it('shares a failing lookup too, and asks again afterwards', async () => {
    const answer = deferred<Array<{ exchange: string; priority: number }>>();
    const dns = fakeDns(oneMx('dest.test', 60, 60));
    dns.resolveMx.mockImplementationOnce(() =>
      answer.promise.then(() => Promise.reject(dnsError('ETIMEOUT'))),
    );
    const resolver = cachingResolver(dns);

    const routes = Promise.all([resolver.route('dest.test'), resolver.route('dest.test')]);
    answer.resolve([]);

    await expect(routes).resolves.toMatchObject([{ kind: 'transient' }, { kind: 'transient' }]);
    await expect(resolver.route('dest.test')).resolves.toEqual(hostsRoute);
    expect(dns.resolveMx).toHaveBeenCalledTimes(2);
  });

  it('keeps at most maxEntries domains, dropping the oldest', async () => {
    const names = ['a.test', 'b.test', 'c.test'];
    const dns = fakeDns({
      mx: Object.assign({}, ...names.map((name) => oneMx(name, 60, 60).mx)) as FakeZone['mx'],
      a: Object.assign({}, ...names.map((name) => oneMx(name, 60, 60).a)) as FakeZone['a'],
    });
    const resolver = cachingResolver(dns, { maxEntries: 2 });

    for (const name of names) await resolver.route(name);
    expect(dns.resolveMx).toHaveBeenCalledTimes(3);

    await resolver.route('b.test');
    await resolver.route('c.test');
    expect(dns.resolveMx).toHaveBeenCalledTimes(3);
    await resolver.route('a.test');
    expect(dns.resolveMx).toHaveBeenCalledTimes(4);
    expect(dns.resolveMx).toHaveBeenLastCalledWith('a.test');
  });

  it('keeps nothing without cache options, or with a maximum TTL of 0', async () => {
    for (const resolver of [
      (dns: RoutingDns) => new MxResolver(dns),
      (dns: RoutingDns) => cachingResolver(dns, { maxTtlMs: 0 }),
    ]) {
      const dns = fakeDns(oneMx('dest.test', 60, 60));
      const routing = resolver(dns);
      await routing.route('dest.test');
      await routing.route('nowhere.test');
      await routing.route('dest.test');
      await routing.route('nowhere.test');
      expect(dns.resolveMx).toHaveBeenCalledTimes(4);
    }
  });
});
