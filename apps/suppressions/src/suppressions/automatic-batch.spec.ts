import { batchOutcomes, inboxClaims, wantedSuppressions } from './automatic-batch';
import type { AutomaticSuppression, SuppressionDecision } from './delivery-outcome';

const ACCOUNT = '6f1c2a8e-2b1d-4c3e-9f0a-1b2c3d4e5f60';

function suppression(email: string, domain = 'a.example.test'): AutomaticSuppression {
  return { accountId: ACCOUNT, email, domain, reason: `Hard bounce of ${email}` };
}

function decision(eventId: string, ...suppressions: AutomaticSuppression[]): SuppressionDecision {
  return { eventId, suppressions, unusable: [] };
}

describe('inboxClaims', () => {
  it('claims the events asking for a suppression, each once, sorted', () => {
    expect(
      inboxClaims([
        decision('e3', suppression('x@example.test')),
        decision('e1'),
        decision('e2', suppression('y@example.test')),
        decision('e3', suppression('x@example.test')),
      ]),
    ).toEqual(['e2', 'e3']);
  });

  it('claims nothing for a batch of deliveries', () => {
    expect(inboxClaims([decision('e1'), decision('e2')])).toEqual([]);
  });
});

describe('wantedSuppressions', () => {
  it('takes the suppressions of the claimed events, each key once, the first event keeping it', () => {
    const shared = suppression('shared@example.test');
    const decisions = [
      decision('e1', suppression('z@example.test'), shared),
      decision('e2', { ...shared, reason: 'later' }, suppression('b@example.test')),
      decision('e3', suppression('seen@example.test')),
    ];

    const wanted = wantedSuppressions(decisions, new Set(['e1', 'e2']));

    expect(
      wanted.map(({ suppression: { email, reason }, itemIndex }) => [email, reason, itemIndex]),
    ).toEqual([
      ['b@example.test', 'Hard bounce of b@example.test', 1],
      ['shared@example.test', 'Hard bounce of shared@example.test', 0],
      ['z@example.test', 'Hard bounce of z@example.test', 0],
    ]);
  });

  it('keeps one address for two domains apart, and an event twice in a batch once', () => {
    const decisions = [
      decision('e1', suppression('x@example.test', 'a.example.test')),
      decision('e1', suppression('x@example.test', 'a.example.test')),
      decision('e2', suppression('x@example.test', 'b.example.test')),
    ];

    const wanted = wantedSuppressions(decisions, new Set(['e1', 'e2']));

    expect(wanted.map(({ suppression: { domain }, itemIndex }) => [domain, itemIndex])).toEqual([
      ['a.example.test', 0],
      ['b.example.test', 2],
    ]);
  });
});

describe('batchOutcomes', () => {
  it('answers what handling each event alone, in order, answers', () => {
    const decisions = [
      decision('delivered'),
      decision('new', suppression('x@example.test')),
      decision('new', suppression('x@example.test')),
      decision('old', suppression('y@example.test')),
      decision('covered', suppression('z@example.test')),
    ];

    expect(batchOutcomes(decisions, new Set(['new', 'covered']), new Set([1]))).toEqual([
      'ignored',
      'suppressed',
      'duplicate',
      'duplicate',
      'already_suppressed',
    ]);
  });
});
