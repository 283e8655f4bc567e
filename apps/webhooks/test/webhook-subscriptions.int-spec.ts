import { randomUUID } from 'node:crypto';

import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { WebhookChangeSubjects, WebhooksSubjects } from '@envoi/contracts-webhooks';
import { RpcClient } from '@envoi/shared-nats';
import { pollUntil } from '@envoi/shared-testing';

import { deliveredEvent, newSecret, useWebhooksTestRig } from './webhooks-test-app';

/**
 * The fan-out's cached subscriptions against the service from dist/ (real PostgreSQL and NATS):
 * an account's webhooks changed through the service take effect on the next event, and a
 * change broadcast by another replica drops the cached set.
 */
describe('webhook subscriptions cached by the fan-out', () => {
  // Kept for the whole test: only a change can drop a set, never its age.
  const rig = useWebhooksTestRig({ WEBHOOK_SUBSCRIPTION_CACHE_TTL_MS: '600000' });

  it('takes a webhook created, switched off and deleted through the service on the next event', async () => {
    const { app, receiver } = rig();
    const rpc = new RpcClient(app.nats, 10_000);
    const accountId = randomUUID();
    /** Publishes an event and waits until the service handled it. */
    const handled = async () => {
      const event = deliveredEvent(accountId, 'a@cached.example');
      await app.publish(DeliveryStreamSubjects.delivered, event);
      await pollUntil(() => app.eventsHandled(), Boolean, { what: 'the event handled' });
      return event.id;
    };
    const idsAt = () => receiver.callsTo('cached').map((call) => call.headers['webhook-id']);

    // Read (and cached) while the account has no webhook.
    await handled();
    const created = await rpc.request(WebhooksSubjects.create, {
      account_id: accountId,
      body: { name: 'cached', url: receiver.url('cached'), scope: 'global', on_delivered: true },
    });
    const first = await handled();
    await pollUntil(idsAt, (ids) => ids.includes(first), { what: 'the event at the new webhook' });

    await rpc.request(WebhooksSubjects.update, {
      account_id: accountId,
      webhook_id: created.id,
      changes: { on_delivered: false },
    });
    const switchedOff = await handled();
    await rpc.request(WebhooksSubjects.update, {
      account_id: accountId,
      webhook_id: created.id,
      changes: { on_delivered: true },
    });
    const again = await handled();
    await pollUntil(idsAt, (ids) => ids.includes(again), { what: 'the event after the switch' });
    await rpc.request(WebhooksSubjects.delete, { account_id: accountId, webhook_id: created.id });
    const afterDelete = await handled();

    expect(idsAt()).toEqual([first, again]);
    expect(await app.deliveriesOf(switchedOff)).toEqual({});
    expect(await app.deliveriesOf(afterDelete)).toEqual({});
  }, 40_000);

  it('drops an account’s cached set when another replica broadcasts a change', async () => {
    const { app, receiver } = rig();
    const rpc = new RpcClient(app.nats, 10_000);
    const accountId = randomUUID();
    const handled = async () => {
      const event = deliveredEvent(accountId, 'a@broadcast.example');
      await app.publish(DeliveryStreamSubjects.delivered, event);
      await pollUntil(() => app.eventsHandled(), Boolean, { what: 'the event handled' });
      return event.id;
    };
    await handled();
    // Written behind the service's back, as another replica would: this one learns it only
    // from the broadcast.
    await app.createWebhook({
      accountId,
      url: receiver.url('broadcast'),
      secret: newSecret(),
      flags: ['on_delivered'],
    });
    const unseen = await handled();
    expect(await app.deliveriesOf(unseen)).toEqual({});

    rpc.emit(WebhookChangeSubjects.changed, { account_id: accountId });
    const seen = await pollUntil(
      async () => {
        const id = await handled();
        return { id, deliveries: await app.deliveriesOf(id) };
      },
      ({ deliveries }) => Object.keys(deliveries).length === 1,
      { what: 'an event delivered after the broadcast', timeoutMs: 10_000 },
    );
    await pollUntil(
      () => receiver.callsTo('broadcast').map((call) => call.headers['webhook-id']),
      (ids) => ids.includes(seen.id),
      { what: 'the event at the endpoint' },
    );
  }, 40_000);
});
