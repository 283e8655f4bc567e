import { UnprocessableMessageError } from '@envoi/shared-nats';

import { decodeJob, jobWeight } from './delivery-worker';

describe('delivery jobs, decoded with their contract', () => {
  const job = {
    message_id: '0b8f9a52-3c1e-4d57-9a6b-2f0c8e4d1a7b',
    account_id: 'acct-1',
    attempt: 2,
  };

  it('takes a job as published', () => {
    expect({ ...decodeJob(job) }).toEqual(job);
  });

  it.each([
    ['a message id that is not a uuid', { ...job, message_id: 'not-a-uuid' }],
    ['no account', { ...job, account_id: undefined }],
    ['attempt 0', { ...job, attempt: 0 }],
    ['a fractional attempt', { ...job, attempt: 1.5 }],
    ['an attempt given as text', { ...job, attempt: '2' }],
    ['no object at all', null],
  ])('finds %s unprocessable', (_what, payload) => {
    expect(() => decodeJob(payload)).toThrow(UnprocessableMessageError);
  });
});

describe('chunk delivery jobs, decoded with their contract', () => {
  const ids = ['0b8f9a52-3c1e-4d57-9a6b-2f0c8e4d1a7b', '1c8f9a52-3c1e-4d57-9a6b-2f0c8e4d1a7b'];
  const chunk = { message_ids: ids, account_id: 'acct-1', attempt: 1 };

  it('takes a chunk job as published, and a one-message job still', () => {
    expect({ ...decodeJob(chunk) }).toEqual(chunk);
    expect({ ...decodeJob({ message_id: ids[0], account_id: 'a', attempt: 3 }) }).toEqual({
      message_id: ids[0],
      account_id: 'a',
      attempt: 3,
    });
  });

  it.each([
    ['no message', { ...chunk, message_ids: [] }],
    ['more than DELIVERY_JOB_MAX_MESSAGES', { ...chunk, message_ids: Array(101).fill(ids[0]) }],
    ['an id that is not a uuid', { ...chunk, message_ids: [ids[0], 'nope'] }],
    ['a retry (chunks are first attempts only)', { ...chunk, attempt: 2 }],
    ['no account', { ...chunk, account_id: undefined }],
  ])('finds a chunk with %s unprocessable', (_what, payload) => {
    expect(() => decodeJob(payload)).toThrow(UnprocessableMessageError);
  });
});

describe("a delivery job's weight (messages it carries)", () => {
  it('is the number of messages of a chunk job', () => {
    expect(jobWeight({ message_ids: ['a', 'b', 'c'], account_id: 'acct-1', attempt: 1 })).toBe(3);
  });

  it('is 1 for a job of one message, and for a payload it cannot read', () => {
    expect(jobWeight({ message_id: 'a', account_id: 'acct-1', attempt: 1 })).toBe(1);
    expect(jobWeight({ message_ids: [], account_id: 'acct-1', attempt: 1 })).toBe(1);
    expect(jobWeight({ message_ids: 'a' })).toBe(1);
    expect(jobWeight(null)).toBe(1);
    expect(jobWeight('text')).toBe(1);
  });
});
