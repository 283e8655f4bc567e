import { SuppressionSnapshot } from './suppression-snapshot';

const NOW = Date.parse('2026-11-26T10:00:00Z');
const LATER = '2026-12-26T10:00:00.000Z';
const EARLIER = '2026-11-26T09:59:59.000Z';

describe('SuppressionSnapshot', () => {
  const snapshot = new SuppressionSnapshot([
    { email: 'everywhere@example.test', domain: null, reason: 'account-wide', expires_at: LATER },
    { email: 'both@example.test', domain: null, reason: 'account-wide', expires_at: LATER },
    { email: 'both@example.test', domain: 'a.test', reason: 'a only', expires_at: LATER },
    { email: 'other@example.test', domain: 'b.test', reason: 'b only', expires_at: LATER },
    { email: 'expired@example.test', domain: null, reason: 'gone', expires_at: EARLIER },
    { email: 'silent@example.test', domain: 'a.test', reason: '', expires_at: LATER },
  ]);

  it('answers an account-wide suppression for any sender domain', () => {
    expect(snapshot.reasons('a.test', ['everywhere@example.test'], NOW)).toEqual(
      new Map([['everywhere@example.test', 'account-wide']]),
    );
    expect(snapshot.reasons('c.test', ['everywhere@example.test'], NOW).size).toBe(1);
  });

  it("prefers the sender domain's own suppression to the account-wide one", () => {
    expect(snapshot.reasons('a.test', ['both@example.test'], NOW).get('both@example.test')).toBe(
      'a only',
    );
    expect(snapshot.reasons('c.test', ['both@example.test'], NOW).get('both@example.test')).toBe(
      'account-wide',
    );
  });

  it("leaves out another domain's suppression, an expired one and unknown addresses", () => {
    expect(
      snapshot.reasons(
        'a.test',
        ['other@example.test', 'expired@example.test', 'nobody@example.test'],
        NOW,
      ).size,
    ).toBe(0);
  });

  it('compares addresses trimmed and lowercased, keyed the same way', () => {
    expect(snapshot.reasons('a.test', ['  Silent@Example.TEST '], NOW)).toEqual(
      new Map([['silent@example.test', '']]),
    );
  });

  it('stops answering a suppression once it expires', () => {
    const expiry = Date.parse(LATER);
    expect(snapshot.reasons('a.test', ['everywhere@example.test'], expiry - 1).size).toBe(1);
    expect(snapshot.reasons('a.test', ['everywhere@example.test'], expiry).size).toBe(0);
  });
});
