import { endpointsFor, type SubscribedEndpoint, type SubscriptionSet } from './subscription-set';

describe('endpointsFor', () => {
  const endpoint = (
    webhookId: string,
    fields: Partial<SubscribedEndpoint> = {},
  ): SubscribedEndpoint => ({
    webhookId,
    url: `https://${webhookId}.example/hook`,
    secretCiphertext: 'sealed',
    global: true,
    domains: new Set(),
    flags: new Set(['on_delivered']),
    failing: false,
    ...fields,
  });
  const set: SubscriptionSet = {
    streamed: false,
    endpoints: [
      endpoint('global'),
      endpoint('scoped', { global: false, domains: new Set(['a.example']) }),
      endpoint('other-flag', { flags: new Set(['on_opened']) }),
      endpoint('other-domain', { global: false, domains: new Set(['b.example']) }),
    ],
  };
  const names = (found: readonly SubscribedEndpoint[]) => found.map(({ webhookId }) => webhookId);

  it('answers the global webhooks and those scoped to the event’s domain, with its flag on', () => {
    expect(names(endpointsFor(set, { flag: 'on_delivered', domain: 'a.example' }))).toEqual([
      'global',
      'scoped',
    ]);
    expect(names(endpointsFor(set, { flag: 'on_opened', domain: 'a.example' }))).toEqual([
      'other-flag',
    ]);
  });

  it('answers only global webhooks for an event without a domain', () => {
    expect(names(endpointsFor(set, { flag: 'on_delivered', domain: null }))).toEqual(['global']);
  });
});
