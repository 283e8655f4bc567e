import { randomUUID } from 'node:crypto';

import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import type { ReceivedCall } from '@envoi/shared-testing';
import { pollUntil } from '@envoi/shared-testing';

import { deliveredEvent, newSecret, useWebhooksTestRig } from './webhooks-test-app';

/**
 * The delivery service's `message.outcome_batch` against the service started from dist/, real
 * PostgreSQL and NATS and a loopback receiver: each event it carries goes out as if it had come
 * alone, under its own webhook-id, to the endpoints subscribed to its type.
 */
describe('webhook deliveries of an outcome batch', () => {
  const rig = useWebhooksTestRig();

  const webhookIds = (calls: readonly ReceivedCall[]) =>
    new Set(calls.map((call) => call.headers['webhook-id']));

  it('fans out each event of the batch once per subscribed endpoint, by its type', async () => {
    const { app, receiver } = rig();
    const accountId = randomUUID();
    const secret = newSecret();
    const both = await app.createWebhook({
      accountId,
      url: receiver.url('outcomes-both'),
      secret,
      flags: ['on_delivered', 'on_bounced'],
    });
    const deliveredOnly = await app.createWebhook({
      accountId,
      url: receiver.url('outcomes-delivered'),
      secret,
      flags: ['on_delivered'],
    });
    const delivered = deliveredEvent(accountId, 'hello@one.example');
    const bounce = deliveredEvent(accountId, 'hello@one.example');
    const bounced = {
      ...bounce,
      type: 'message.bounced',
      data: { ...bounce.data, event: 'on_bounced', status: 'Bounced' },
    };
    const batch = {
      id: randomUUID(),
      type: 'message.outcome_batch',
      timestamp: new Date().toISOString(),
      data: { events: [delivered, bounced] },
    };

    await app.publish(DeliveryStreamSubjects.outcomeBatch, batch);
    // The same batch again under another message id: still one delivery per event and endpoint.
    await app.publish(DeliveryStreamSubjects.outcomeBatch, batch, `${batch.id}-again`);

    await pollUntil(
      async () => [await app.deliveriesOf(delivered.id), await app.deliveriesOf(bounced.id)],
      ([ofDelivered, ofBounced]) =>
        ofDelivered?.[both] === 'delivered' &&
        ofDelivered[deliveredOnly] === 'delivered' &&
        ofBounced?.[both] === 'delivered',
      { what: "the batch's events delivered", timeoutMs: 20_000 },
    );
    await pollUntil(
      () => app.eventsHandled(),
      (handled) => handled,
      { what: 'both copies of the batch handled', timeoutMs: 20_000 },
    );
    expect(await app.deliveriesOf(delivered.id)).toEqual({
      [both]: 'delivered',
      [deliveredOnly]: 'delivered',
    });
    expect(await app.deliveriesOf(bounced.id)).toEqual({ [both]: 'delivered' });
    expect(await app.deliveriesOf(batch.id)).toEqual({});
    expect(webhookIds(receiver.callsTo('outcomes-both'))).toEqual(
      new Set([delivered.id, bounced.id]),
    );
    expect(webhookIds(receiver.callsTo('outcomes-delivered'))).toEqual(new Set([delivered.id]));
    const types = receiver
      .callsTo('outcomes-both')
      .map((call) => (JSON.parse(call.body) as { type: string }).type);
    expect(new Set(types)).toEqual(new Set(['message.delivered', 'message.bounced']));
  }, 40_000);
});
