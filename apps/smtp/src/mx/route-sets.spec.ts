import type { DomainRouteSet } from '@envoi/contracts-routes';

import type { BusRequester } from '../submission/bus-requester';
import { RouteSets } from './route-sets';

const ACCOUNT = '5d2a4f8e-0c1b-4d3e-9f6a-7b8c9d0e1f2a';
const TICKETS = '9a8b7c6d-5e4f-4321-8fed-cba987654321';
const SUPPORT = '1b2c3d4e-5f60-4172-8394-a5b6c7d8e9f0';
const TTL_MS = 30_000;

function fakeRoutesService(setOf: (domain: string) => DomainRouteSet) {
  const asked: string[] = [];
  const bus: BusRequester = {
    request: (subject, payload) => {
      if (subject.name !== 'routes.route.domain-routes.v1') {
        throw new Error(`unexpected ${subject.name}`);
      }
      const { domain } = payload as { domain: string };
      asked.push(domain);
      return Promise.resolve(setOf(domain) as never);
    },
  };
  return { bus, asked };
}

const routedExample = (domain: string): DomainRouteSet =>
  domain === 'routed.example'
    ? {
        outcome: 'routed',
        account_id: ACCOUNT,
        domain,
        routes: [
          { id: TICKETS, recipient: 'ticket-*' },
          { id: SUPPORT, recipient: 'support@routed.example' },
        ],
      }
    : { outcome: 'not_routed' };

function build(setOf: (domain: string) => DomainRouteSet = routedExample) {
  let now = 1_000;
  const service = fakeRoutesService(setOf);
  const sets = new RouteSets(service.bus, TTL_MS, 2, () => now);
  return { sets, asked: service.asked, advance: (ms: number) => (now += ms) };
}

describe('RouteSets', () => {
  it('matches each address against its domain’s route set, asked once per domain', async () => {
    const { sets, asked } = build();

    await expect(sets.match('ticket-1@routed.example')).resolves.toEqual({
      outcome: 'route',
      account_id: ACCOUNT,
      domain: 'routed.example',
      route_ids: [TICKETS],
    });
    await expect(sets.match('support@routed.example')).resolves.toMatchObject({
      route_ids: [SUPPORT],
    });
    await expect(sets.match('sales@routed.example')).resolves.toEqual({
      outcome: 'unknown_recipient',
    });
    await expect(sets.match('x@other.example')).resolves.toEqual({ outcome: 'not_routed' });
    expect(asked).toEqual(['routed.example', 'other.example']);
  });

  it('answers not_routed for what is not a plain address, without asking', async () => {
    const { sets, asked } = build();

    await expect(sets.match('a%b@routed.example')).resolves.toEqual({ outcome: 'not_routed' });
    expect(asked).toEqual([]);
  });

  it('asks again once a domain is forgotten, or every domain, or the TTL passed', async () => {
    const { sets, asked, advance } = build();
    await sets.match('ticket-1@routed.example');

    sets.forget('Routed.Example');
    await sets.match('ticket-2@routed.example');
    sets.forget(null);
    await sets.match('ticket-3@routed.example');
    advance(TTL_MS);
    await sets.match('ticket-4@routed.example');
    await sets.match('ticket-5@routed.example');

    expect(asked).toEqual(['routed.example', 'routed.example', 'routed.example', 'routed.example']);
  });

  it('a domain forgotten while its set is asked for does not keep the older answer', async () => {
    let routed = true;
    const { sets, asked } = build((domain) =>
      routed ? routedExample(domain) : { outcome: 'not_routed' },
    );

    const pending = sets.match('ticket-1@routed.example');
    sets.forget('routed.example');
    routed = false;
    await expect(pending).resolves.toMatchObject({ outcome: 'route' });
    await expect(sets.match('ticket-2@routed.example')).resolves.toEqual({
      outcome: 'not_routed',
    });
    expect(asked).toEqual(['routed.example', 'routed.example']);
  });

  it('keeps at most its bound of domains, the oldest going first', async () => {
    const { sets, asked } = build();
    for (const domain of ['a.example', 'b.example', 'c.example', 'a.example']) {
      await sets.match(`x@${domain}`);
    }

    expect(asked).toEqual(['a.example', 'b.example', 'c.example', 'a.example']);
  });
});
