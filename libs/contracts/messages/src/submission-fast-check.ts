import { isIn, isIP, isUUID, length, maxLength } from 'class-validator';

import { EMAIL_MAX_LENGTH } from './limits';
import { AcceptSubmissionRequest, SUBMISSION_RECIPIENTS_MAX } from './submissions';

const BODY_TYPES: readonly string[] = ['7BIT', '8BITMIME', 'BINARYMIME'];

const KNOWN_KEYS: ReadonlySet<string> = new Set([
  'account_id',
  'credential_id',
  'credential_sandbox',
  'credential_domains',
  'envelope_from',
  'recipients',
  'raw_base64',
  'submission_id',
  'remote_address',
  'body_type',
]);

function isFields(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function isRecipientList(value: unknown): value is string[] {
  return (
    isStringList(value) &&
    value.length >= 1 &&
    value.length <= SUBMISSION_RECIPIENTS_MAX &&
    value.every((recipient) => maxLength(recipient, EMAIL_MAX_LENGTH))
  );
}

/** Absent, or a value `check` passes (null is left to the decorators, which let it through). */
function absentOr(value: unknown, check: (value: unknown) => boolean): boolean {
  return value === undefined || check(value);
}

/**
 * A submission as the smtp edge sends it (the message inline), checked by hand with the
 * decorators' own validator functions: the request when it certainly passes AcceptSubmissionRequest's
 * decorators, with no key they would strip; otherwise undefined, and class-transformer and
 * class-validator check it and word what is wrong. Stricter than the decorators, never looser.
 */
export function checkedSubmission(value: unknown): AcceptSubmissionRequest | undefined {
  if (!isFields(value)) return undefined;
  for (const key of Object.keys(value)) if (!KNOWN_KEYS.has(key)) return undefined;
  const {
    account_id: accountId,
    credential_id: credentialId,
    credential_sandbox: credentialSandbox,
    credential_domains: credentialDomains,
    envelope_from: envelopeFrom,
    recipients,
    raw_base64: rawBase64,
    submission_id: submissionId,
    remote_address: remoteAddress,
    body_type: bodyType,
  } = value;
  const valid =
    typeof accountId === 'string' &&
    isUUID(accountId) &&
    typeof credentialId === 'string' &&
    isUUID(credentialId) &&
    typeof credentialSandbox === 'boolean' &&
    absentOr(credentialDomains, isStringList) &&
    typeof envelopeFrom === 'string' &&
    length(envelopeFrom, 3, EMAIL_MAX_LENGTH) &&
    isRecipientList(recipients) &&
    typeof rawBase64 === 'string' &&
    typeof submissionId === 'string' &&
    length(submissionId, 1, 128) &&
    absentOr(remoteAddress, (address) => typeof address === 'string' && isIP(address)) &&
    absentOr(bodyType, (type) => isIn(type, BODY_TYPES));
  if (!valid) return undefined;
  return Object.assign(new AcceptSubmissionRequest(), {
    account_id: accountId,
    credential_id: credentialId,
    credential_sandbox: credentialSandbox,
    ...(credentialDomains !== undefined ? { credential_domains: credentialDomains } : {}),
    envelope_from: envelopeFrom,
    recipients,
    raw_base64: rawBase64,
    submission_id: submissionId,
    ...(remoteAddress !== undefined ? { remote_address: remoteAddress } : {}),
    ...(bodyType !== undefined ? { body_type: bodyType } : {}),
  });
}
