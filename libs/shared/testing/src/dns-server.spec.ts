import { promises as dns } from 'node:dns';

import { DnsTestServer } from './dns-server';

describe('DnsTestServer', () => {
  let server: DnsTestServer;
  let resolver: dns.Resolver;

  beforeAll(async () => {
    server = await DnsTestServer.start();
    resolver = new dns.Resolver({ timeout: 300, tries: 1 });
    resolver.setServers([server.address]);
  });

  afterEach(() => server.reset());

  afterAll(async () => {
    await server.stop();
  });

  it('answers A, AAAA, MX and TXT records, multi-string TXT included', async () => {
    server.set('example.test', [
      { type: 'A', address: '192.0.2.1' },
      { type: 'AAAA', address: '2001:db8::1' },
      { type: 'MX', exchange: 'MX.Example.test.', priority: 5 },
      { type: 'TXT', value: ['v=spf1 ', 'include:spf.example.net ~all'] },
    ]);

    await expect(resolver.resolve4('example.test')).resolves.toEqual(['192.0.2.1']);
    await expect(resolver.resolve6('example.test')).resolves.toEqual(['2001:db8::1']);
    await expect(resolver.resolveMx('example.test')).resolves.toEqual([
      { exchange: 'mx.example.test', priority: 5 },
    ]);
    await expect(resolver.resolveTxt('example.test')).resolves.toEqual([
      ['v=spf1 ', 'include:spf.example.net ~all'],
    ]);
  });

  it('splits long TXT values into strings of 255 characters and truncates big UDP answers', async () => {
    const long = 'p='.padEnd(1_300, 'A');
    for (let i = 0; i < 3; i++)
      server.add('big.example.test', { type: 'TXT', value: `${i}${long}` });

    const answers = await resolver.resolveTxt('big.example.test');

    expect(answers).toHaveLength(3);
    expect(answers[0]?.map((part) => part.length)).toEqual([255, 255, 255, 255, 255, 26]);
    expect(server.queries.some((query) => query.transport === 'tcp')).toBe(true);
  });

  it('chases CNAME chains like a recursive resolver, and answers the CNAME itself', async () => {
    server.set('a.example.test', [{ type: 'CNAME', target: 'b.example.test' }]);
    server.set('b.example.test', [{ type: 'CNAME', target: 'c.example.test' }]);
    server.set('c.example.test', [{ type: 'TXT', value: 'hello' }]);

    await expect(resolver.resolveTxt('a.example.test')).resolves.toEqual([['hello']]);
    await expect(resolver.resolveCname('a.example.test')).resolves.toEqual(['b.example.test']);
  });

  it('distinguishes NXDOMAIN, NODATA and empty non-terminals', async () => {
    server.set('sel._domainkey.example.test', [{ type: 'TXT', value: 'v=DKIM1' }]);

    await expect(resolver.resolveTxt('missing.example.test')).rejects.toMatchObject({
      code: 'ENOTFOUND',
    });
    await expect(resolver.resolveMx('sel._domainkey.example.test')).rejects.toMatchObject({
      code: 'ENODATA',
    });
    await expect(resolver.resolveTxt('_domainkey.example.test')).rejects.toMatchObject({
      code: 'ENODATA',
    });
  });

  it('replaces and removes records', async () => {
    server.set('x.example.test', [{ type: 'TXT', value: 'one' }]);
    server.set('x.example.test', [
      { type: 'TXT', value: 'two' },
      { type: 'A', address: '192.0.2.7' },
    ]);
    await expect(resolver.resolveTxt('x.example.test')).resolves.toEqual([['two']]);

    server.remove('x.example.test', 'TXT');
    await expect(resolver.resolveTxt('x.example.test')).rejects.toMatchObject({ code: 'ENODATA' });
    server.remove('x.example.test');
    await expect(resolver.resolve4('x.example.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('fails names on demand: SERVFAIL, REFUSED and silence', async () => {
    server.set('f.example.test', [{ type: 'TXT', value: 'ok' }]);

    server.fail('f.example.test', 'servfail');
    await expect(resolver.resolveTxt('f.example.test')).rejects.toMatchObject({
      code: 'ESERVFAIL',
    });
    server.fail('f.example.test', 'refused');
    await expect(resolver.resolveTxt('f.example.test')).rejects.toMatchObject({
      code: 'EREFUSED',
    });
    server.fail('f.example.test', 'timeout');
    await expect(resolver.resolveTxt('f.example.test')).rejects.toMatchObject({
      code: 'ETIMEOUT',
    });
    server.heal('f.example.test');
    await expect(resolver.resolveTxt('f.example.test')).resolves.toEqual([['ok']]);
  });
});
