import { DeliveryJobPayload } from '@envoi/contracts-messages';
import { contractDecoder, UnprocessableMessageError } from '@envoi/shared-nats';

const decodeJob = contractDecoder(DeliveryJobPayload);

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
