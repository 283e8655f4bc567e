import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import type { ApiResponse } from '../support/api-client';
import { expectError } from '../support/expect-error';
import {
  type GatewayReplica,
  rateLimitPeersHeard,
  startGatewayReplica,
} from '../support/gateway-replica';

/** Low limits so a quick burst from the test exceeds them without flooding the machine. */
const PER_SECOND = 2;
const BURST = 10;
const LIMITS = {
  RATE_LIMIT_GENERAL_PER_SECOND: String(PER_SECOND),
  RATE_LIMIT_GENERAL_BURST: String(BURST),
  // To log that they hear each other (the fallback to per-replica limits is covered by the
  // gateway's integration tests).
  LOG_LEVEL: 'info',
};

function expectRateLimited(response: ApiResponse): void {
  expectError(response, 429, 'Too many requests, rate limited.');
  expect(response.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
}

/**
 * Spec 8: the per-account limit holds across every gateway replica together. Two replicas share
 * one account's bucket; a third account on the same replicas is unaffected.
 */
describe('rate limits shared by gateway replicas', () => {
  let first: GatewayReplica;
  let second: GatewayReplica;
  let session: AccountSession;

  beforeAll(async () => {
    [first, second] = await Promise.all([
      startGatewayReplica('gateway-rate-a', LIMITS),
      startGatewayReplica('gateway-rate-b', LIMITS),
    ]);
    await rateLimitPeersHeard([first, second], 2);
    session = await createAccountSession();
  });

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    await closeSessions();
  });

  it('lets one burst through across both replicas, then answers 429 with Retry-After', async () => {
    const startedAt = Date.now();
    const responses = await Promise.all(
      Array.from({ length: 3 * BURST }, (_, index) =>
        session.api.get('/v2/ping', index % 2 === 0 ? first.target : second.target),
      ),
    );
    const elapsedSeconds = (Date.now() - startedAt) / 1000;

    const allowed = responses.filter((response) => response.status === 200);
    const limited = responses.filter((response) => response.status === 429);
    expect(allowed.length + limited.length).toBe(responses.length);
    // Separate per-replica buckets would have let 2 × BURST through.
    expect(allowed.length).toBeGreaterThanOrEqual(BURST);
    expect(allowed.length).toBeLessThanOrEqual(BURST + Math.ceil(elapsedSeconds * PER_SECOND));
    limited.forEach(expectRateLimited);
    const limitedPorts = new Set(
      responses
        .map((response, index) => (response.status === 429 ? index % 2 : -1))
        .filter((side) => side >= 0),
    );
    expect(limitedPorts.size).toBe(2);
  });

  it('counts each account separately', async () => {
    const other = await createAccountSession();
    const response = await other.api.get('/v2/ping', first.target);
    expect(response.status).toBe(200);
  });

  it('lets requests through again once the bucket has refilled', async () => {
    const waitMs = Math.ceil(1000 / PER_SECOND) + 200;
    let response = await session.api.get('/v2/ping', first.target);
    for (let attempt = 0; attempt < 10 && response.status === 429; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      response = await session.api.get('/v2/ping', first.target);
    }
    expect(response.status).toBe(200);
  });
});
