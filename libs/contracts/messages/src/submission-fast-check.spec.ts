import { validatePayload } from '@envoi/contracts-core';

import { EMAIL_MAX_LENGTH } from './limits';
import { checkedSubmission } from './submission-fast-check';
import { AcceptSubmissionRequest, SUBMISSION_RECIPIENTS_MAX } from './submissions';

const SUBMISSION = {
  account_id: '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60',
  credential_id: '0190f5c2-6c1e-7a3b-8c4d-000000000016',
  credential_sandbox: false,
  envelope_from: 'app@example.com',
  recipients: ['someone@recipient.test'],
  raw_base64: Buffer.from('From: app@example.com\r\n\r\nHi\r\n').toString('base64'),
  submission_id: '5b0e1c9e-61c4-4c57-a0f1-0d3e1b6f7a10',
};

/** Variants of the request: the fast check must never pass one the decorators refuse. */
const CASES: Record<string, Record<string, unknown>> = {
  'the common shape': SUBMISSION,
  'every optional field': {
    ...SUBMISSION,
    credential_domains: ['example.com'],
    remote_address: '127.0.0.1',
    body_type: '8BITMIME',
  },
  'an IPv6 address': { ...SUBMISSION, remote_address: '::1' },
  'a bad address': { ...SUBMISSION, remote_address: '127.0.0.300' },
  'a lowercase body type': { ...SUBMISSION, body_type: '8bitmime' },
  'an unknown key': { ...SUBMISSION, is_admin: true },
  'an upload instead': {
    ...SUBMISSION,
    raw_base64: undefined,
    upload: { bucket: 'b', name: 'n', size: 1, sha256: 'a'.repeat(64) },
  },
  'both raw and upload': {
    ...SUBMISSION,
    upload: { bucket: 'b', name: 'n', size: 1, sha256: 'a'.repeat(64) },
  },
  'no raw': { ...SUBMISSION, raw_base64: undefined },
  'a bad account id': { ...SUBMISSION, account_id: 'nope' },
  'a numeric credential id': { ...SUBMISSION, credential_id: 16 },
  'a sandbox flag as a string': { ...SUBMISSION, credential_sandbox: 'false' },
  'null domains': { ...SUBMISSION, credential_domains: null },
  'domains not strings': { ...SUBMISSION, credential_domains: [1] },
  'a short envelope sender': { ...SUBMISSION, envelope_from: 'a@' },
  'a long envelope sender': { ...SUBMISSION, envelope_from: 'a'.repeat(EMAIL_MAX_LENGTH + 1) },
  'no recipients': { ...SUBMISSION, recipients: [] },
  'too many recipients': {
    ...SUBMISSION,
    recipients: Array.from({ length: SUBMISSION_RECIPIENTS_MAX + 1 }, (_, i) => `r${i}@x.test`),
  },
  'the most recipients': {
    ...SUBMISSION,
    recipients: Array.from({ length: SUBMISSION_RECIPIENTS_MAX }, (_, i) => `r${i}@x.test`),
  },
  'a long recipient': { ...SUBMISSION, recipients: ['r'.repeat(EMAIL_MAX_LENGTH + 1)] },
  'a recipient not a string': { ...SUBMISSION, recipients: [{ email: 'a@x.test' }] },
  'recipients as a string': { ...SUBMISSION, recipients: 'a@x.test' },
  'an empty submission id': { ...SUBMISSION, submission_id: '' },
  'a long submission id': { ...SUBMISSION, submission_id: 's'.repeat(129) },
};

const PASSED = [
  'the common shape',
  'every optional field',
  'an IPv6 address',
  'the most recipients',
];

describe('checkedSubmission', () => {
  it('passes the shapes the smtp edge sends, and leaves anything else to the decorators', () => {
    const passed = Object.entries(CASES)
      .filter(([, plain]) => checkedSubmission(plain) !== undefined)
      .map(([name]) => name);
    expect(passed).toEqual(PASSED);
  });

  it.each(PASSED)('passes only what the decorators pass, as they make it: %s', (name) => {
    const plain = CASES[name];
    const validated = validatePayload(AcceptSubmissionRequest, plain);
    const checked = checkedSubmission(plain);
    expect(checked).toBeInstanceOf(AcceptSubmissionRequest);
    expect(validated).toEqual({ ok: true, value: checked });
  });
});
