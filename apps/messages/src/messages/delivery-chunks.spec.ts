import { randomUUID } from 'node:crypto';

import { DELIVERY_JOB_MAX_MESSAGES } from '@envoi/contracts-messages';

import { deliveryChunks, firstDeliveryJob } from './delivery-chunks';

const ids = (count: number) => Array.from({ length: count }, () => randomUUID());

describe('delivery chunks: one first-attempt job per chunk of a send', () => {
  it.each([
    [1, [1]],
    [100, [100]],
    [101, [100, 1]],
    [250, [100, 100, 50]],
  ])('cuts %i messages into jobs of %j', (count, sizes) => {
    const messageIds = ids(count);
    const chunks = deliveryChunks(messageIds);

    expect(DELIVERY_JOB_MAX_MESSAGES).toBe(100);
    expect(chunks.jobs.map((job) => job.messageIds.length)).toEqual(sizes);
    expect(chunks.jobs.flatMap((job) => job.messageIds)).toEqual(messageIds);
    expect(new Set(chunks.jobs.map((job) => job.id)).size).toBe(sizes.length);
    for (const job of chunks.jobs) {
      for (const messageId of job.messageIds) expect(chunks.jobIdOf(messageId)).toBe(job.id);
    }
  });

  it('has no job for no message, and knows no job of a stranger', () => {
    const chunks = deliveryChunks([]);
    expect(chunks.jobs).toEqual([]);
    expect(() => chunks.jobIdOf(randomUUID())).toThrow('is in no delivery job');
  });

  it('keeps the one-message job shape for a chunk of one, and names every message otherwise', () => {
    const [one, two] = ids(2) as [string, string];
    expect(firstDeliveryJob([one], 'acct')).toEqual({
      message_id: one,
      account_id: 'acct',
      attempt: 1,
    });
    expect(firstDeliveryJob([one, two], 'acct')).toEqual({
      message_ids: [one, two],
      account_id: 'acct',
      attempt: 1,
    });
  });
});
