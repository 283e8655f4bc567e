import { validatePayload } from '@envoi/contracts-core';
import { deliveryJobContract } from '@envoi/contracts-messages';

import { fastDeliveryJob } from './job-fast-check';

const ID = '0b8f9a52-3c1e-4d57-9a6b-2f0c8e4d1a7b';
const OTHER_ID = '1c8f9a52-3c1e-4d57-9a6b-2f0c8e4d1a7b';
const job = { message_id: ID, account_id: 'acct-1', attempt: 2 };
const chunk = { message_ids: [ID, OTHER_ID], account_id: 'acct-1', attempt: 1 };

/** What the contract class makes of a payload: its fields, or undefined when it refuses it. */
function byContract(payload: unknown): object | undefined {
  const validated = validatePayload(deliveryJobContract(payload), payload);
  return validated.ok ? { ...validated.value } : undefined;
}

describe('delivery jobs checked by hand', () => {
  it.each([
    ['a one-message job', job],
    ['a first attempt', { ...job, attempt: 1 }],
    ['a chunk job', chunk],
    ['a chunk of DELIVERY_JOB_MAX_MESSAGES', { ...chunk, message_ids: Array(100).fill(ID) }],
  ])('takes %s as published, as the contract class does', (_what, payload) => {
    const checked = fastDeliveryJob(payload);
    expect(checked).toEqual(payload);
    expect(checked).toEqual(byContract(payload));
  });

  it('keeps only the fields of the contract', () => {
    expect(fastDeliveryJob({ ...job, extra: 'x' })).toEqual(job);
    expect(fastDeliveryJob({ ...chunk, extra: 'x' })).toEqual(chunk);
    expect(byContract({ ...job, extra: 'x' })).toEqual(job);
  });

  it.each([
    ['a message id that is not a uuid', { ...job, message_id: 'not-a-uuid' }],
    ['a message id that is not text', { ...job, message_id: 42 }],
    ['no account', { ...job, account_id: undefined }],
    ['an account that is not text', { ...job, account_id: 7 }],
    ['attempt 0', { ...job, attempt: 0 }],
    ['a fractional attempt', { ...job, attempt: 1.5 }],
    ['an attempt given as text', { ...job, attempt: '2' }],
    ['no attempt', { message_id: ID, account_id: 'acct-1' }],
    ['an empty chunk', { ...chunk, message_ids: [] }],
    ['a chunk over the limit', { ...chunk, message_ids: Array(101).fill(ID) }],
    ['a chunk with an id that is not a uuid', { ...chunk, message_ids: [ID, 'nope'] }],
    ['a chunk whose ids are not a list', { ...chunk, message_ids: ID }],
    ['a chunk retry', { ...chunk, attempt: 2 }],
    ['a chunk without an account', { ...chunk, account_id: undefined }],
    ['no object', null],
    ['a list', [job]],
    ['text', 'job'],
  ])('leaves %s to the contract class, which refuses it too', (_what, payload) => {
    expect(fastDeliveryJob(payload)).toBeUndefined();
    expect(byContract(payload)).toBeUndefined();
  });
});
