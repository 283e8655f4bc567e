import type { DomainOwner } from '@envoi/contracts-domains';

import type { MatchableRoute, RoutesRepository } from '../routes/routes.repository';
import type { DomainOwners } from './domain-owners.service';
import { RecipientMatcher } from './recipient-matcher.service';

const A = 'a0000000-0000-4000-8000-000000000001';
const B = 'b0000000-0000-4000-8000-000000000002';

function matcherWith(owners: DomainOwner[], routes: MatchableRoute[]) {
  const lookups: string[] = [];
  const domainOwners = {
    of: (domain: string) => {
      lookups.push(domain);
      return Promise.resolve(owners);
    },
  } as Pick<DomainOwners, 'of'> as DomainOwners;
  const repository = {
    findMatchable: (accountIds: readonly string[], domain: string) =>
      Promise.resolve(
        routes.filter(
          (route) =>
            accountIds.includes(route.accountId) &&
            (route.domainName === null || route.domainName === domain),
        ),
      ),
  } as Pick<RoutesRepository, 'findMatchable'> as RoutesRepository;
  return { matcher: new RecipientMatcher(domainOwners, repository), lookups };
}

const owner = (accountId: string): DomainOwner => ({
  account_id: accountId,
  domain_id: `${accountId.slice(0, 8)}-0000-4000-8000-0000000000dd`,
  dns_valid: true,
});
const route = (
  id: string,
  accountId: string,
  recipient: string,
  domainName: string | null,
): MatchableRoute => ({ id, accountId, recipient, domainName });

describe('RecipientMatcher', () => {
  it('answers the routes of the owning account whose pattern takes the address', async () => {
    const { matcher } = matcherWith(
      [owner(A)],
      [
        route('r1', A, 'support', null),
        route('r2', A, '*@example.com', 'example.com'),
        route('r3', A, 'sales@example.com', 'example.com'),
      ],
    );
    await expect(matcher.match('Support@Example.com')).resolves.toEqual({
      outcome: 'route',
      account_id: A,
      domain: 'example.com',
      route_ids: ['r1', 'r2'],
    });
  });

  it('answers unknown_recipient when the domain has routes but none takes the local part', async () => {
    const { matcher } = matcherWith([owner(A)], [route('r1', A, 'ticket-*', null)]);
    await expect(matcher.match('support@example.com')).resolves.toEqual({
      outcome: 'unknown_recipient',
    });
  });

  it('answers not_routed for a domain nobody routes or nobody owns', async () => {
    await expect(matcherWith([owner(A)], []).matcher.match('x@example.com')).resolves.toEqual({
      outcome: 'not_routed',
    });
    await expect(matcherWith([], []).matcher.match('x@example.com')).resolves.toEqual({
      outcome: 'not_routed',
    });
  });

  it('takes the first owner with routes for the domain (DNS-valid first, as the owners come)', async () => {
    const { matcher } = matcherWith(
      [owner(B), owner(A)],
      [route('ra', A, '', null), route('rb', B, 'other@example.com', 'example.com')],
    );
    await expect(matcher.match('x@example.com')).resolves.toEqual({ outcome: 'unknown_recipient' });
  });

  it.each(['@relay.example:x@example.com', 'x%y@example.com', '"a@b"@example.com'])(
    'answers not_routed for %j without asking anyone (items 41-42)',
    async (recipient) => {
      const { matcher, lookups } = matcherWith([owner(A)], [route('r1', A, '', null)]);
      await expect(matcher.match(recipient)).resolves.toEqual({ outcome: 'not_routed' });
      expect(lookups).toEqual([]);
    },
  );
});
