import {
  EXPIRES_MAX_DAYS,
  FIRST_ATTEMPT_MAX_DAYS,
  type SandboxResult,
  type SendOptionsBody,
} from '@envoi/contracts-messages';

import { MessagesException } from './messages.exception';

const DAY_MS = 86_400_000;

/** RFC 3339 date-time: a full date, a time and an offset (stricter than ISO 8601). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** An account's defaults for what a send may override (accounts service, cached). */
export interface AccountDefaults {
  trackOpens: boolean;
  trackClicks: boolean;
  metadataDays: number;
  dataDays: number;
}

export interface Schedule {
  firstAttemptAt: Date | null;
  expiresAt: Date | null;
}

/** What a message is stored and delivered with. */
export interface EffectiveOptions extends Schedule {
  trackOpens: boolean;
  trackClicks: boolean;
  metadataDays: number;
  dataDays: number;
  sandbox: boolean;
  sandboxResult: SandboxResult | null;
  /** The metadata (and the content with it) is deleted then. */
  retainUntil: Date;
  /** The content is purged then. */
  purgeContentAt: Date;
}

function parseTime(field: string, value: string): Date {
  const time = Date.parse(value);
  if (!RFC3339.test(value) || Number.isNaN(time)) {
    throw MessagesException.invalid(`${field} must be an RFC 3339 date-time`);
  }
  return new Date(time);
}

/**
 * Spec 4.2 rule 6: first_attempt in the future and at most 7 days after the request; expires in
 * the future, at most 8 days after the request and not before first_attempt.
 */
export function checkSchedule(schedule: SendOptionsBody['schedule'], now: Date): Schedule {
  const firstAttempt = schedule?.first_attempt;
  const expires = schedule?.expires;
  const firstAttemptAt =
    firstAttempt === undefined ? null : parseTime('schedule.first_attempt', firstAttempt);
  const expiresAt = expires === undefined ? null : parseTime('schedule.expires', expires);
  const nowMs = now.getTime();
  if (firstAttemptAt) {
    if (firstAttemptAt.getTime() <= nowMs) {
      throw MessagesException.invalid('schedule.first_attempt must be in the future');
    }
    if (firstAttemptAt.getTime() > nowMs + FIRST_ATTEMPT_MAX_DAYS * DAY_MS) {
      throw MessagesException.invalid(
        `schedule.first_attempt must be within ${FIRST_ATTEMPT_MAX_DAYS} days of the request`,
      );
    }
  }
  if (expiresAt) {
    if (expiresAt.getTime() <= nowMs) {
      throw MessagesException.invalid('schedule.expires must be in the future');
    }
    if (expiresAt.getTime() > nowMs + EXPIRES_MAX_DAYS * DAY_MS) {
      throw MessagesException.invalid(
        `schedule.expires must be within ${EXPIRES_MAX_DAYS} days of the request`,
      );
    }
    if (firstAttemptAt && expiresAt.getTime() < firstAttemptAt.getTime()) {
      throw MessagesException.invalid('schedule.expires must not be before schedule.first_attempt');
    }
  }
  return { firstAttemptAt, expiresAt };
}

/**
 * The request's tracking, retention and sandbox settings over the account's defaults. Retention
 * counts from the first attempt of a scheduled message (from acceptance otherwise), so that a
 * message is never purged before it is sent. A data retention of 0 means "once delivery has
 * finished": the status machine (and a cancel) empties such content when the message's status
 * becomes final; until then its purge time is the metadata's, so it never outlives the message.
 */
export function effectiveOptions(
  body: SendOptionsBody,
  account: AccountDefaults,
  schedule: Schedule,
  now: Date,
): EffectiveOptions {
  const metadataDays = body.retention?.metadata ?? account.metadataDays;
  const dataDays = body.retention?.data ?? account.dataDays;
  const start = schedule.firstAttemptAt ?? now;
  const retainUntil = new Date(start.getTime() + metadataDays * DAY_MS);
  const purgeContentAt =
    dataDays > 0
      ? new Date(start.getTime() + Math.min(dataDays, metadataDays) * DAY_MS)
      : retainUntil;
  const sandbox = body.sandbox === true;
  return {
    ...schedule,
    trackOpens: body.tracking?.open ?? account.trackOpens,
    trackClicks: body.tracking?.click ?? account.trackClicks,
    metadataDays,
    dataDays,
    sandbox,
    sandboxResult: sandbox ? (body.sandbox_result ?? 'deliver') : null,
    retainUntil,
    purgeContentAt,
  };
}
