import { CodedError, CommonErrorCode } from '@envoi/contracts-core';
import {
  type AcceptSubmissionRequest,
  type AcceptSubmissionResult,
  MessagesErrorCode,
} from '@envoi/contracts-messages';

import { acceptEach, submissionEntries } from './submission-outcomes';

const RAW = Buffer.from('From: app@acme.example\r\nSubject: hi\r\n\r\nhi\r\n').toString('base64');

function entry(id: string): AcceptSubmissionRequest {
  const ids = { account_id: '0190f5c2-6c1e-7a3b-8c4d-00000000a001', submission_id: id };
  return {
    ...ids,
    credential_id: '0190f5c2-6c1e-7a3b-8c4d-00000000c001',
    credential_sandbox: false,
    recipients: ['someone@recipient.test'],
    envelope_from: 'app@acme.example',
    raw_base64: RAW,
  };
}

/** The code of the coded error `action` throws. */
function thrownCode(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof CodedError ? error.code : 'not a coded error';
  }
  return undefined;
}

function resultOf(id: string): AcceptSubmissionResult {
  return { message_id_header: `<${id}@acme.example>`, messages: [] };
}

describe('submissionEntries', () => {
  it('takes 1 to 16 objects', () => {
    const entries = [entry('a'), entry('b')];
    expect(submissionEntries({ submissions: entries })).toBe(entries);
  });

  it.each([
    ['no list', {}],
    ['an empty list', { submissions: [] }],
    ['17 entries', { submissions: Array.from({ length: 17 }, (_, index) => entry(`${index}`)) }],
    ['an entry that is not an object', { submissions: [entry('a'), 'b'] }],
  ])('refuses %s as validation_failed', (_case, payload) => {
    expect(thrownCode(() => submissionEntries(payload))).toBe(CommonErrorCode.ValidationFailed);
  });
});

describe('acceptEach', () => {
  it('answers each entry its own result or error, in order, once every one ended', async () => {
    const unexpected: unknown[] = [];
    const accepted: string[] = [];
    const outcomes = await acceptEach(
      [entry('a'), { ...entry('b'), recipients: [] }, entry('c'), entry('d'), entry('e')],
      (request) => {
        accepted.push(request.submission_id);
        if (request.submission_id === 'c') {
          return Promise.reject(
            new CodedError(MessagesErrorCode.SubmissionMalformed, 'no From header'),
          );
        }
        if (request.submission_id === 'd') {
          return Promise.reject(Object.assign(new Error('terminating'), { code: '57P01' }));
        }
        if (request.submission_id === 'e') return Promise.reject(new Error('a bug'));
        return Promise.resolve(resultOf(request.submission_id));
      },
      (error) => unexpected.push(error),
    );
    expect(accepted).toEqual(['a', 'c', 'd', 'e']);
    expect(outcomes).toEqual([
      { result: resultOf('a') },
      { error: expect.objectContaining({ code: CommonErrorCode.ValidationFailed }) as unknown },
      { error: { code: MessagesErrorCode.SubmissionMalformed, message: 'no From header' } },
      { error: { code: CommonErrorCode.Unavailable, message: 'service temporarily unavailable' } },
      { error: { code: CommonErrorCode.Internal, message: 'internal server error' } },
    ]);
    expect(unexpected).toEqual([new Error('a bug')]);
  });
});
