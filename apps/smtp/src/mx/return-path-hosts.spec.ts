import type { ReturnPathHostMatch } from '@envoi/contracts-domains';

import type { BusRequester } from '../submission/bus-requester';
import { ReturnPathHosts } from './return-path-hosts';

function bus(answer: (host: string) => ReturnPathHostMatch) {
  const asked: string[] = [];
  const requester: BusRequester = {
    request: (_subject, payload) => {
      const host = (payload as { host: string }).host;
      asked.push(host);
      return Promise.resolve(answer(host) as never);
    },
  };
  return { requester, asked };
}

describe('ReturnPathHosts', () => {
  it('reuses an answer for its TTL, then asks again', async () => {
    let now = 0;
    const { requester, asked } = bus((host) => ({
      verified: host === 'rp.a.example',
      cache_ttl_ms: 1000,
    }));
    const hosts = new ReturnPathHosts(requester, 10, () => now);
    await expect(hosts.isVerified('rp.a.example')).resolves.toBe(true);
    await expect(hosts.isVerified('rp.a.example')).resolves.toBe(true);
    await expect(hosts.isVerified('rp.b.example')).resolves.toBe(false);
    now = 1000;
    await hosts.isVerified('rp.a.example');
    expect(asked).toEqual(['rp.a.example', 'rp.b.example', 'rp.a.example']);
  });

  it("forgets a domain's hosts on its change and keeps at most maxEntries", async () => {
    const { requester, asked } = bus(() => ({ verified: true, cache_ttl_ms: 60_000 }));
    const hosts = new ReturnPathHosts(requester, 2, () => 0);
    await hosts.isVerified('rp.a.example');
    await hosts.isVerified('rp.b.example');
    hosts.forget('a.example');
    await hosts.isVerified('rp.a.example');
    await hosts.isVerified('rp.c.example');
    // rp.b.example was the oldest of three.
    await hosts.isVerified('rp.b.example');
    expect(asked).toEqual([
      'rp.a.example',
      'rp.b.example',
      'rp.a.example',
      'rp.c.example',
      'rp.b.example',
    ]);
  });
});
