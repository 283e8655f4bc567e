import { randomBytes } from 'node:crypto';

import { WebhooksConfig } from '../webhooks.config';
import { WebhookSecretCipher } from '../webhooks/webhook-secret-cipher';
import type { WebhookSubscriptions } from '../webhooks/webhook-subscriptions.service';
import type { AttemptRecorder } from './attempt-recorder.service';
import type {
  AttemptRecord,
  ClaimedDelivery,
  ClaimLimits,
  DeliveriesRepository,
  RecordedAttempt,
} from './deliveries.repository';
import { DeliveryWorker } from './delivery-worker.service';
import type { TransportResult } from './webhook-transport';

/** Counts claims; none finds anything. */
class FakeDeliveries {
  claims = 0;

  claimDue(_limits: ClaimLimits): Promise<ClaimedDelivery[]> {
    this.claims += 1;
    return Promise.resolve([]);
  }

  releaseLeases(): Promise<void> {
    return Promise.resolve();
  }
}

/** Holds the attempts until `recordAll`, then records them together, as one batch does. */
class FakeRecorder {
  private readonly waiting: Array<{
    record: AttemptRecord;
    resolve: (r: RecordedAttempt) => void;
  }> = [];

  get held(): number {
    return this.waiting.length;
  }

  record(record: AttemptRecord): Promise<RecordedAttempt | null> {
    return new Promise((resolve) => this.waiting.push({ record, resolve }));
  }

  recordAll(): void {
    for (const { resolve } of this.waiting.splice(0))
      resolve({ webhookEnabled: true, accountId: 'account' });
  }
}

class AnsweringTransport {
  calls = 0;

  post(): Promise<TransportResult> {
    this.calls += 1;
    return Promise.resolve({ status: 200, bodyPrefix: '', durationMs: 1 });
  }
}

/** Answers each call when told to, with the status given then. */
class HeldTransport {
  private readonly open: Array<(result: TransportResult) => void> = [];

  get calls(): number {
    return this.open.length;
  }

  post(): Promise<TransportResult> {
    return new Promise((resolve) => this.open.push(resolve));
  }

  answer(status: number): void {
    this.open.shift()?.({ status, bodyPrefix: '', durationMs: 1 });
  }
}

const NO_SUBSCRIPTIONS = { changed: () => undefined } as unknown as WebhookSubscriptions;

/** Lets the event loop turn until `done` (at most 1 000 turns). */
async function turnsUntil(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1_000 && !done(); turn += 1) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('DeliveryWorker', () => {
  const cipher = new WebhookSecretCipher(randomBytes(32).toString('hex'));
  const config = Object.assign(new WebhooksConfig(), {
    WEBHOOK_POLL_INTERVAL_MS: 60_000,
  });

  function leased(count: number): ClaimedDelivery[] {
    return Array.from({ length: count }, (_, index) => ({
      id: `delivery-${index}`,
      webhookId: 'hook-a',
      eventId: `event-${index}`,
      eventType: 'message.delivered',
      body: '{}',
      attempts: 0,
      leaseToken: `token-${index}`,
      url: 'https://hooks.example/a',
      secretCiphertext: cipher.seal('whsec_test', 'hook-a'),
      webhookFailing: false,
    }));
  }

  it('claims once for the attempts recorded together, after all of them', async () => {
    const deliveries = new FakeDeliveries();
    const recorder = new FakeRecorder();
    const transport = new AnsweringTransport();
    const worker = new DeliveryWorker(
      config,
      deliveries as unknown as DeliveriesRepository,
      recorder as unknown as AttemptRecorder,
      cipher,
      transport,
      NO_SUBSCRIPTIONS,
    );

    await worker.sendLeasedBy(3, () => Promise.resolve(leased(3)));
    await turnsUntil(() => recorder.held === 3);
    expect(transport.calls).toBe(3);
    recorder.recordAll();
    await turnsUntil(() => deliveries.claims > 0);
    await turnsUntil(() => false);

    expect(deliveries.claims).toBe(1);
    await worker.onModuleDestroy();
  });

  describe('first attempts from the stream', () => {
    const direct = (index: number) => ({
      id: `direct-${index}`,
      webhookId: 'hook-d',
      accountId: 'account',
      eventId: `event-${index}`,
      eventType: 'message.delivered',
      body: '{}',
      url: 'https://hooks.example/d',
      secretCiphertext: cipher.seal('whsec_test', 'hook-d'),
    });

    function directWorker(transport: HeldTransport, deliveries = new FakeDeliveries()) {
      return new DeliveryWorker(
        Object.assign(new WebhooksConfig(), {
          WEBHOOK_POLL_INTERVAL_MS: 60_000,
          WEBHOOK_ENDPOINT_CONCURRENCY: 2,
        }),
        deliveries as unknown as DeliveriesRepository,
        new FakeRecorder() as unknown as AttemptRecorder,
        cipher,
        transport,
        NO_SUBSCRIPTIONS,
      );
    }

    it('calls within the endpoint limit and hands each result back, recording none', async () => {
      const transport = new HeldTransport();
      const deliveries = new FakeDeliveries();
      const worker = directWorker(transport, deliveries);
      const attempts = worker.attemptNow([direct(0), direct(1), direct(2)]);
      await turnsUntil(() => transport.calls === 2);
      expect(transport.calls).toBe(2);

      transport.answer(200);
      await turnsUntil(() => attempts[0]?.outcome !== undefined && transport.calls === 2);
      expect(attempts[0]?.outcome?.outcome).toMatchObject({ state: 'delivered', succeeded: true });
      // The third took the freed place.
      expect(transport.calls).toBe(2);
      transport.answer(503);
      transport.answer(200);
      const ended = await Promise.all(attempts.map((attempt) => attempt.ended));
      expect(ended.map((result) => result?.outcome.state)).toEqual([
        'delivered',
        'pending',
        'delivered',
      ]);
      expect(worker.isFailing('hook-d', true)).toBe(false);
      await worker.onModuleDestroy();
    });

    it('takes back the attempts still waiting: they end unsent', async () => {
      const transport = new HeldTransport();
      const worker = directWorker(transport);
      const attempts = worker.attemptNow([direct(0), direct(1), direct(2)]);
      await turnsUntil(() => transport.calls === 2);

      worker.takeBack(attempts);
      expect(await attempts[2]?.ended).toBeNull();
      expect(attempts[0]?.outcome).toBeUndefined();
      transport.answer(500);
      expect((await attempts[0]?.ended)?.outcome.succeeded).toBe(false);
      expect(worker.isFailing('hook-d', false)).toBe(true);
      transport.answer(200);
      await attempts[1]?.ended;
      await worker.onModuleDestroy();
    });

    it('ends the waiting ones unsent when the replica stops, and makes no call after', async () => {
      const transport = new HeldTransport();
      const worker = directWorker(transport);
      const attempts = worker.attemptNow([direct(0), direct(1), direct(2)]);
      await turnsUntil(() => transport.calls === 2);

      const stopping = worker.onModuleDestroy();
      expect(await attempts[2]?.ended).toBeNull();
      transport.answer(200);
      transport.answer(200);
      await stopping;
      expect(worker.attemptNow([direct(3)]).map((attempt) => attempt.outcome)).toEqual([null]);
      expect(transport.calls).toBe(0);
    });
  });
});
