import type { OutboundResult } from '@envoi/shared-outbound';

import { routeCallOutcome } from './route-call-outcome';

const SCHEDULE = { baseMs: 1_000, maxAttempts: 11 };
const NOW = new Date('2026-01-01T00:00:00.000Z');
const MIDDLE = () => 0.5;

const response = (status: number): OutboundResult => ({
  type: 'response',
  ok: status >= 200 && status < 300,
  status,
  bodyPrefix: '',
  truncated: false,
  durationMs: 5,
});

describe('routeCallOutcome', () => {
  it('settles on any 2xx', () => {
    expect(routeCallOutcome(response(204), 3, SCHEDULE, NOW, MIDDLE)).toEqual({
      succeeded: true,
      nextAttemptAt: null,
      status: 204,
      error: null,
    });
  });

  it('retries n^4 base later after the n-th failure, 10 times (notes 2.8), then gives up', () => {
    const waits = [1, 2, 3, 10].map(
      (attempt) =>
        (routeCallOutcome(response(503), attempt, SCHEDULE, NOW, MIDDLE).nextAttemptAt?.getTime() ??
          0) - NOW.getTime(),
    );
    expect(waits).toEqual([1_000, 16_000, 81_000, 10_000_000]);
    expect(routeCallOutcome(response(503), 11, SCHEDULE, NOW, MIDDLE).nextAttemptAt).toBeNull();
  });

  it('fails a redirect and a call without response, saying why', () => {
    expect(routeCallOutcome(response(302), 1, SCHEDULE, NOW, MIDDLE).succeeded).toBe(false);
    expect(
      routeCallOutcome(
        {
          type: 'failure',
          kind: 'timeout',
          message: 'no answer within 10000 ms',
          durationMs: 10_000,
        },
        1,
        SCHEDULE,
        NOW,
        MIDDLE,
      ),
    ).toMatchObject({
      succeeded: false,
      status: null,
      error: 'timeout: no answer within 10000 ms',
    });
  });
});
