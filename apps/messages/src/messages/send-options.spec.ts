import { CodedError } from '@envoi/contracts-core';
import { MessagesErrorCode, type SendOptionsBody } from '@envoi/contracts-messages';

import { type AccountDefaults, checkSchedule, effectiveOptions } from './send-options';

const NOW = new Date('2030-01-10T12:00:00.000Z');
const DAY = 86_400_000;

function at(offsetMs: number): string {
  return new Date(NOW.getTime() + offsetMs).toISOString();
}

function scheduleError(schedule: SendOptionsBody['schedule']): string {
  try {
    checkSchedule(schedule, NOW);
  } catch (error) {
    if (error instanceof CodedError && error.hasCode(MessagesErrorCode.InvalidMessage)) {
      return error.message;
    }
    throw error;
  }
  throw new Error('expected the schedule to be refused');
}

const ACCOUNT: AccountDefaults = {
  trackOpens: true,
  trackClicks: false,
  metadataDays: 30,
  dataDays: 7,
};

function body(overrides: Partial<SendOptionsBody> = {}): SendOptionsBody {
  return { from: { email: 'a@example.com' }, subject: 's', text_content: 't', ...overrides };
}

describe('checkSchedule (spec 4.2 rule 6)', () => {
  it('has no times without a schedule', () => {
    expect(checkSchedule(undefined, NOW)).toEqual({ firstAttemptAt: null, expiresAt: null });
  });

  it('accepts the bounds themselves', () => {
    expect(checkSchedule({ first_attempt: at(7 * DAY), expires: at(8 * DAY) }, NOW)).toEqual({
      firstAttemptAt: new Date(at(7 * DAY)),
      expiresAt: new Date(at(8 * DAY)),
    });
    expect(checkSchedule({ first_attempt: at(1), expires: at(1) }, NOW).expiresAt).toEqual(
      new Date(at(1)),
    );
  });

  it.each([
    [{ first_attempt: at(0) }, 'schedule.first_attempt must be in the future'],
    [{ first_attempt: at(-DAY) }, 'schedule.first_attempt must be in the future'],
    [{ first_attempt: at(7 * DAY + 1) }, 'schedule.first_attempt must be within 7 days'],
    [{ expires: at(0) }, 'schedule.expires must be in the future'],
    [{ expires: at(8 * DAY + 1) }, 'schedule.expires must be within 8 days'],
    [{ first_attempt: at(2 * DAY), expires: at(DAY) }, 'must not be before schedule.first_attempt'],
    [{ first_attempt: '2030-01-11' }, 'schedule.first_attempt must be an RFC 3339 date-time'],
    [{ expires: '2030-01-11T10:00:00' }, 'schedule.expires must be an RFC 3339 date-time'],
  ])('refuses %j', (schedule, message) => {
    expect(scheduleError(schedule)).toContain(message);
  });

  it('reads offsets', () => {
    expect(
      checkSchedule({ first_attempt: '2030-01-10T14:00:00+01:00' }, NOW).firstAttemptAt,
    ).toEqual(new Date('2030-01-10T13:00:00Z'));
  });
});

describe('effectiveOptions', () => {
  const none = { firstAttemptAt: null, expiresAt: null };

  it("takes the account's defaults", () => {
    const options = effectiveOptions(body(), ACCOUNT, none, NOW);

    expect(options).toMatchObject({
      trackOpens: true,
      trackClicks: false,
      metadataDays: 30,
      dataDays: 7,
      sandbox: false,
      sandboxResult: null,
      retainUntil: new Date(NOW.getTime() + 30 * DAY),
      purgeContentAt: new Date(NOW.getTime() + 7 * DAY),
    });
  });

  it('lets the request override each of them (null keeps the default)', () => {
    const options = effectiveOptions(
      body({
        tracking: { open: false, click: true },
        retention: { metadata: 2, data: null },
        sandbox: true,
      }),
      ACCOUNT,
      none,
      NOW,
    );

    expect(options).toMatchObject({
      trackOpens: false,
      trackClicks: true,
      metadataDays: 2,
      dataDays: 7,
      sandbox: true,
      sandboxResult: 'deliver',
      retainUntil: new Date(NOW.getTime() + 2 * DAY),
      // Content never outlives its metadata.
      purgeContentAt: new Date(NOW.getTime() + 2 * DAY),
    });
  });

  it('purges content with the metadata when data retention is 0, for now', () => {
    const options = effectiveOptions(
      body({ retention: { metadata: 3, data: 0 } }),
      ACCOUNT,
      none,
      NOW,
    );

    expect(options.purgeContentAt).toEqual(options.retainUntil);
  });

  it('counts retention from the first attempt of a scheduled message', () => {
    const firstAttemptAt = new Date(NOW.getTime() + 5 * DAY);
    const options = effectiveOptions(
      body({ retention: { metadata: 1, data: 1 } }),
      ACCOUNT,
      { firstAttemptAt, expiresAt: null },
      NOW,
    );

    expect(options.retainUntil).toEqual(new Date(firstAttemptAt.getTime() + DAY));
  });

  it('keeps a sandbox result only for sandbox messages', () => {
    expect(
      effectiveOptions(body({ sandbox_result: 'bounce' }), ACCOUNT, none, NOW).sandboxResult,
    ).toBeNull();
    expect(
      effectiveOptions(body({ sandbox: true, sandbox_result: 'bounce' }), ACCOUNT, none, NOW)
        .sandboxResult,
    ).toBe('bounce');
  });
});
