import { WebhooksConfig } from '../webhooks.config';
import { AttemptRecorder, RECORD_BATCH_MAX } from './attempt-recorder.service';
import type { AttemptRecord, RecordedAttempt } from './deliveries.repository';

/** Records what it is given, batch by batch; each batch waits until `release` is called. */
class FakeDeliveries {
  readonly batches: string[][] = [];
  failNext = false;
  private releases: Array<() => void> = [];

  async recordAttempts(records: readonly AttemptRecord[]): Promise<Map<string, RecordedAttempt>> {
    this.batches.push(records.map((record) => record.deliveryId));
    await new Promise<void>((resolve) => this.releases.push(resolve));
    if (this.failNext) throw new Error('connection lost');
    // A lease lost: the delivery named "lost" is not recorded.
    return new Map(
      records
        .filter((record) => record.deliveryId !== 'lost')
        .map((record) => [
          record.deliveryId,
          { webhookEnabled: record.succeeded, accountId: 'account' },
        ]),
    );
  }

  releaseAll(): void {
    for (const release of this.releases.splice(0)) release();
  }
}

/** Waits (bounded) until the fake has seen `count` batches. */
async function batchesSeen(deliveries: FakeDeliveries, count: number): Promise<void> {
  for (let turn = 0; turn < 1_000 && deliveries.batches.length < count; turn += 1) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(deliveries.batches).toHaveLength(count);
}

describe('AttemptRecorder', () => {
  const attempt = (deliveryId: string, succeeded = true): AttemptRecord => ({
    deliveryId,
    leaseToken: `token-${deliveryId}`,
    state: succeeded ? 'delivered' : 'pending',
    nextAttemptAt: null,
    attemptedAt: new Date(),
    responseStatus: succeeded ? 200 : 503,
    error: null,
    durationMs: 3,
    responseBody: '',
    succeeded,
    gone: false,
  });
  let deliveries: FakeDeliveries;
  let recorder: AttemptRecorder;

  beforeEach(() => {
    deliveries = new FakeDeliveries();
    recorder = new AttemptRecorder(
      Object.assign(new WebhooksConfig(), { WEBHOOK_RECORD_WINDOW_MS: 1 }),
      deliveries,
    );
  });

  it('records attempts that end together in one batch; each caller gets its own result', async () => {
    const results = [recorder.record(attempt('a')), recorder.record(attempt('b', false))];
    await batchesSeen(deliveries, 1);
    deliveries.releaseAll();
    await expect(Promise.all(results)).resolves.toEqual([
      { webhookEnabled: true, accountId: 'account' },
      { webhookEnabled: false, accountId: 'account' },
    ]);
    expect(deliveries.batches).toEqual([['a', 'b']]);
  });

  it('records those that end during a batch in the next one, at once after it', async () => {
    const first = recorder.record(attempt('a'));
    await batchesSeen(deliveries, 1);
    const later = [recorder.record(attempt('b')), recorder.record(attempt('lost'))];
    deliveries.releaseAll();
    await first;
    await batchesSeen(deliveries, 2);
    deliveries.releaseAll();
    await expect(Promise.all(later)).resolves.toEqual([
      { webhookEnabled: true, accountId: 'account' },
      null,
    ]);
    expect(deliveries.batches).toEqual([['a'], ['b', 'lost']]);
  });

  it(`sends a full batch of ${RECORD_BATCH_MAX} without waiting for the window`, async () => {
    const ids = Array.from({ length: RECORD_BATCH_MAX + 1 }, (_, index) => `d${index}`);
    const results = ids.map((id) => recorder.record(attempt(id)));
    await batchesSeen(deliveries, 1);
    expect(deliveries.batches[0]).toEqual(ids.slice(0, RECORD_BATCH_MAX));
    deliveries.releaseAll();
    await batchesSeen(deliveries, 2);
    deliveries.releaseAll();
    await Promise.all(results);
    expect(deliveries.batches[1]).toEqual(ids.slice(RECORD_BATCH_MAX));
  });

  it('fails every attempt of a batch that could not be recorded', async () => {
    deliveries.failNext = true;
    const results = [recorder.record(attempt('a')), recorder.record(attempt('b'))];
    await batchesSeen(deliveries, 1);
    deliveries.releaseAll();
    await expect(Promise.all(results)).rejects.toThrow('connection lost');
  });

  it('records what is waiting before it stops', async () => {
    const result = recorder.record(attempt('a'));
    const stopped = recorder.onModuleDestroy();
    await batchesSeen(deliveries, 1);
    deliveries.releaseAll();
    await stopped;
    await expect(result).resolves.toEqual({ webhookEnabled: true, accountId: 'account' });
  });
});
