import { attemptOutcome } from './attempt-outcome';

describe('attemptOutcome', () => {
  const schedule = { baseMs: 1_000, maxAttempts: 3 };
  const now = new Date('2026-01-01T00:00:00.000Z');
  const middle = () => 0.5;
  const response = (status: number) => ({ status, bodyPrefix: 'ok', durationMs: 12 });

  it.each([200, 201, 204, 299])('counts %i as delivered', (status) => {
    expect(attemptOutcome(response(status), 1, schedule, now, middle)).toEqual({
      state: 'delivered',
      nextAttemptAt: null,
      succeeded: true,
      gone: false,
      responseStatus: status,
      error: null,
      responseBody: 'ok',
      durationMs: 12,
    });
  });

  it.each([199, 301, 404, 500, 503])('retries %i on the schedule', (status) => {
    expect(attemptOutcome(response(status), 2, schedule, now, middle)).toMatchObject({
      state: 'pending',
      nextAttemptAt: new Date(now.getTime() + 16_000),
      succeeded: false,
      responseStatus: status,
    });
  });

  it('retries a call that got no response, keeping why', () => {
    expect(
      attemptOutcome({ error: 'connect ECONNREFUSED', durationMs: 3 }, 1, schedule, now, middle),
    ).toMatchObject({
      state: 'pending',
      nextAttemptAt: new Date(now.getTime() + 1_000),
      responseStatus: null,
      error: 'connect ECONNREFUSED',
      responseBody: '',
    });
  });

  it('gives up after the last attempt', () => {
    expect(attemptOutcome(response(500), 3, schedule, now, middle)).toMatchObject({
      state: 'given_up',
      nextAttemptAt: null,
    });
  });

  it('gives up at once on 410 Gone, which disables the webhook', () => {
    expect(attemptOutcome(response(410), 1, schedule, now, middle)).toMatchObject({
      state: 'given_up',
      nextAttemptAt: null,
      gone: true,
      succeeded: false,
    });
  });
});
