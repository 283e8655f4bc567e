import type { RateLimitMode } from './account-rate-limiter';
import { AccountRateLimiter } from './account-rate-limiter';
import { ReplicatedRateLimiter } from './replicated-rate-limiter';

const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const LIMITS = { general: { perSecond: 5, burst: 3 } };

function setup(mode: RateLimitMode) {
  const replicated = new ReplicatedRateLimiter({
    replicaId: 'a',
    limits: LIMITS,
    reportIntervalMs: 100,
    peerExpiryMs: 1_000,
  });
  const take = jest.spyOn(replicated, 'take');
  return { limiter: new AccountRateLimiter({ mode, limits: LIMITS, replicated }), take };
}

function allowedOf(limiter: AccountRateLimiter<'general'>, count: number): number {
  let allowed = 0;
  for (let i = 0; i < count; i += 1) {
    if (limiter.decide(ACCOUNT_ID, 'general').allowed) allowed += 1;
  }
  return allowed;
}

describe('AccountRateLimiter modes', () => {
  it('allows everything when off, counting nothing', () => {
    const { limiter, take } = setup('off');
    expect(allowedOf(limiter, 10)).toBe(10);
    expect(take).not.toHaveBeenCalled();
  });

  it('counts in this process only when local', () => {
    const { limiter, take } = setup('local');
    expect(allowedOf(limiter, 10)).toBe(3);
    expect(take).not.toHaveBeenCalled();
  });

  it('counts with the other replicas when shared', () => {
    const { limiter, take } = setup('shared');
    expect(allowedOf(limiter, 10)).toBe(3);
    expect(take).toHaveBeenCalledTimes(10);
    expect(take).toHaveBeenCalledWith(ACCOUNT_ID, 'general');
  });
});
