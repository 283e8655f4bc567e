import { WebhooksConfig } from '../webhooks.config';
import type { SubscribedEndpoint } from '../webhooks/subscription-set';
import type { AttemptOutcome } from './attempt-outcome';
import type {
  DeliveriesRepository,
  FanOutRecords,
  RecordedAttempt,
  StoredFanOut,
} from './deliveries.repository';
import type { DeliveryWorker } from './delivery-worker.service';
import { DirectAttempt, type DirectDelivery } from './direct-attempt';
import { DirectFanOut } from './direct-fan-out';

const WAIT_MS = 1_000;

/** Hands out the attempts; the test ends their calls. */
class FakeWorker {
  readonly attempts: DirectAttempt[] = [];
  readonly recordedLater: Array<{ id: string; leaseToken: string }> = [];
  /** Ids still waiting for their turn (taken back at the wait's end). */
  waiting = new Set<string>();

  attemptNow(deliveries: readonly DirectDelivery[]): DirectAttempt[] {
    const made = deliveries.map((delivery) => new DirectAttempt(delivery));
    this.attempts.push(...made);
    return made;
  }

  takeBack(attempts: readonly DirectAttempt[]): void {
    for (const attempt of attempts) {
      if (this.waiting.has(attempt.delivery.id)) attempt.end(null);
    }
  }

  leaseMs(): number {
    return 30_000;
  }

  recordWhenEnded(attempt: DirectAttempt, leaseToken: string): void {
    this.recordedLater.push({ id: attempt.delivery.id, leaseToken });
  }

  isFailing(_webhookId: string, stored: boolean): boolean {
    return stored;
  }

  claims = 0;

  noteRecorded(): void {
    // Nothing was disabled in these cases.
  }

  claimAfterRecords(): void {
    this.claims += 1;
  }
}

class FakeDeliveries {
  stored: FanOutRecords | undefined;

  storeFanOut(records: FanOutRecords): Promise<StoredFanOut> {
    this.stored = records;
    const recorded = new Map<string, RecordedAttempt>(
      records.attempted.map((attempt) => [
        attempt.id,
        { webhookEnabled: true, accountId: attempt.accountId },
      ]),
    );
    const leaseTokens = new Map(
      records.leased.map((delivery) => [delivery.id, `lease-${delivery.id}`]),
    );
    return Promise.resolve({ recorded, leaseTokens });
  }
}

const delivered: AttemptOutcome = {
  state: 'delivered',
  nextAttemptAt: null,
  succeeded: true,
  gone: false,
  responseStatus: 200,
  error: null,
  responseBody: '',
  durationMs: 2,
};

function delivery(id: string, webhookId = 'hook'): DirectDelivery {
  return {
    id,
    webhookId,
    accountId: 'account',
    eventId: `event-${id}`,
    eventType: 'message.delivered',
    body: '{}',
    url: `https://${webhookId}.example/hook`,
    secretCiphertext: 'sealed',
  };
}

const endpoint = (webhookId: string): SubscribedEndpoint => ({
  webhookId,
  url: `https://${webhookId}.example/hook`,
  secretCiphertext: 'sealed',
  global: true,
  domains: new Set(),
  flags: new Set(['on_delivered']),
  failing: false,
});

describe('DirectFanOut', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function fanOut() {
    const worker = new FakeWorker();
    const deliveries = new FakeDeliveries();
    const direct = new DirectFanOut(
      Object.assign(new WebhooksConfig(), { WEBHOOK_DIRECT_WAIT_MS: WAIT_MS }),
      deliveries as unknown as DeliveriesRepository,
      worker as unknown as DeliveryWorker,
    );
    return { worker, deliveries, direct };
  }

  it('stores the results once every call ended, without waiting for the limit', async () => {
    const { worker, deliveries, direct } = fanOut();
    const sending = direct.send([delivery('a'), delivery('b')]);
    for (const attempt of worker.attempts) {
      attempt.end({ outcome: delivered, attemptedAt: new Date() });
    }
    await sending;

    expect(deliveries.stored?.attempted.map(({ id }) => id)).toEqual(['a', 'b']);
    expect(deliveries.stored?.unsent).toEqual([]);
    expect(deliveries.stored?.leased).toEqual([]);
  });

  it('stores each call with its delivery, when it was made and its outcome', async () => {
    const { worker, deliveries, direct } = fanOut();
    const attemptedAt = new Date('2026-01-02T03:04:05Z');
    const sending = direct.send([delivery('a')]);
    worker.attempts[0]?.end({ outcome: delivered, attemptedAt });
    await sending;

    expect(deliveries.stored?.attempted).toEqual([
      {
        id: 'a',
        webhookId: 'hook',
        accountId: 'account',
        eventId: 'event-a',
        eventType: 'message.delivered',
        body: '{}',
        attemptedAt,
        ...delivered,
      },
    ]);
    // Nothing waits in the database.
    expect(worker.claims).toBe(0);
  });

  it('after the wait stores running calls leased, waiting ones due, and sends that endpoint’s next events through the database until they end', async () => {
    const { worker, deliveries, direct } = fanOut();
    const sending = direct.send([
      delivery('fast', 'quick'),
      delivery('running', 'slow'),
      delivery('waiting', 'slow'),
    ]);
    worker.waiting.add('waiting');
    worker.attempts[0]?.end({ outcome: delivered, attemptedAt: new Date() });
    await jest.advanceTimersByTimeAsync(WAIT_MS);
    await sending;

    expect(deliveries.stored?.attempted.map(({ id }) => id)).toEqual(['fast']);
    expect(deliveries.stored?.unsent.map(({ id }) => id)).toEqual(['waiting']);
    expect(deliveries.stored?.leased.map(({ id }) => id)).toEqual(['running']);
    expect(worker.recordedLater).toEqual([{ id: 'running', leaseToken: 'lease-running' }]);
    expect(worker.claims).toBe(1);
    expect(direct.takes(endpoint('slow'))).toBe(false);
    expect(direct.takes(endpoint('quick'))).toBe(true);

    worker.attempts[1]?.end({ outcome: delivered, attemptedAt: new Date() });
    await worker.attempts[1]?.ended;
    await Promise.resolve();
    expect(direct.takes(endpoint('slow'))).toBe(true);
  });

  it('sends a failing endpoint’s events through the database', () => {
    const { direct } = fanOut();
    expect(direct.takes({ ...endpoint('sick'), failing: true })).toBe(false);
  });
});
