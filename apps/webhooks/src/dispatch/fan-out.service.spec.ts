import { sampleEvent } from '../deliveries-api/sample-events';
import { NO_SUBSCRIPTIONS, type SubscriptionSet } from '../webhooks/subscription-set';
import type { WebhookSubscriptions } from '../webhooks/webhook-subscriptions.service';
import type { DeliveriesRepository } from './deliveries.repository';
import type { DirectDelivery } from './direct-attempt';
import type { DirectFanOut } from './direct-fan-out';
import { FanOutService } from './fan-out.service';
import type { WebhookEvent } from './webhook-event';
import type { TargetedEvent, WebhookEventWriter } from './webhook-event-writer';

const ACCOUNT = '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9';

/** Records every call; a statement would be one of them. */
class Calls {
  readonly made: string[] = [];
  readonly written: TargetedEvent[][] = [];
  readonly sent: DirectDelivery[][] = [];
  /** Endpoints the direct path refuses (their calls fail or run late). */
  readonly refused = new Set<string>();

  subscriptions(sets: Record<string, SubscriptionSet>): WebhookSubscriptions {
    return {
      of: (accountId: string) => Promise.resolve(sets[accountId] ?? NO_SUBSCRIPTIONS),
    } as unknown as WebhookSubscriptions;
  }

  deliveries(): DeliveriesRepository {
    return {
      findSubscribers: () => {
        this.made.push('findSubscribers');
        return Promise.resolve([]);
      },
    } as unknown as DeliveriesRepository;
  }

  writer(): WebhookEventWriter {
    return {
      write: (items: TargetedEvent[]) => {
        this.made.push('write');
        this.written.push(items);
        return Promise.resolve([]);
      },
    } as unknown as WebhookEventWriter;
  }

  direct(): DirectFanOut {
    return {
      takes: ({ webhookId }: { webhookId: string }) => !this.refused.has(webhookId),
      send: (deliveries: DirectDelivery[]) => {
        this.made.push('send');
        this.sent.push(deliveries);
        return Promise.resolve();
      },
    } as unknown as DirectFanOut;
  }
}

function fanOutWith(calls: Calls, sets: Record<string, SubscriptionSet>): FanOutService {
  return new FanOutService(
    calls.subscriptions(sets),
    calls.deliveries(),
    calls.writer(),
    calls.direct(),
  );
}

const item = (event: WebhookEvent, redelivered = false) => ({ event, redelivered });

describe('FanOutService', () => {
  const event = (): WebhookEvent => ({
    ...sampleEvent('message.delivered', ACCOUNT, new Date()),
    id: `event-${Math.random()}`,
  });
  const subscribed: SubscriptionSet = {
    streamed: false,
    endpoints: [
      {
        webhookId: 'hook',
        url: 'https://hook.example/in',
        secretCiphertext: 'sealed',
        global: true,
        domains: new Set(),
        flags: new Set(['on_delivered']),
        failing: false,
      },
    ],
  };

  it('does nothing for events nobody subscribed to: no statement, no call', async () => {
    const calls = new Calls();
    await fanOutWith(calls, {}).fanOut([item(event()), item(event())]);
    expect(calls.made).toEqual([]);
  });

  it('sends a first attempt straight to the endpoint, once per event', async () => {
    const calls = new Calls();
    const first = event();
    await fanOutWith(calls, { [ACCOUNT]: subscribed }).fanOut([item(first), item(first)]);
    expect(calls.sent.flat().map(({ eventId, webhookId }) => [eventId, webhookId])).toEqual([
      [first.id, 'hook'],
    ]);
    expect(calls.written.flat()).toEqual([]);
  });

  it('stores first a redelivered event and one for an endpoint the direct path refuses', async () => {
    const calls = new Calls();
    const redelivered = event();
    await fanOutWith(calls, { [ACCOUNT]: subscribed }).fanOut([item(redelivered, true)]);
    calls.refused.add('hook');
    const refused = event();
    await fanOutWith(calls, { [ACCOUNT]: subscribed }).fanOut([item(refused)]);

    expect(calls.sent.flat()).toEqual([]);
    expect(calls.written.flat().map(({ event: { id }, target }) => [id, target])).toEqual([
      [redelivered.id, { webhookId: 'hook', endpoint: true, streamed: false }],
      [refused.id, { webhookId: 'hook', endpoint: true, streamed: false }],
    ]);
  });

  it('asks the database for stream listeners only for accounts that have some', async () => {
    const calls = new Calls();
    await fanOutWith(calls, { [ACCOUNT]: { ...subscribed, streamed: true } }).fanOut([
      item(event()),
    ]);
    expect(calls.made).toContain('findSubscribers');
  });
});
