import { randomBytes } from 'node:crypto';

import { WebhooksConfig } from '../webhooks.config';
import { WebhookSecretCipher } from '../webhooks/webhook-secret-cipher';
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
    for (const { resolve } of this.waiting.splice(0)) resolve({ webhookEnabled: true });
  }
}

class AnsweringTransport {
  calls = 0;

  post(): Promise<TransportResult> {
    this.calls += 1;
    return Promise.resolve({ status: 200, bodyPrefix: '', durationMs: 1 });
  }
}

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
});
