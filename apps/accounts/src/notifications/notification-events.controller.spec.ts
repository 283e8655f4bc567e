import { RouteDisabledData } from '@envoi/contracts-routes';
import { WebhookDisabledData } from '@envoi/contracts-webhooks';
import { UnprocessableMessageError } from '@envoi/shared-nats';

import { eventData } from './notification-events.controller';

const decode = eventData('webhook.disabled', WebhookDisabledData);

const data = {
  account_id: '5b0f8f8e-2d6a-4c1e-9c64-1f6a4e0b7a11',
  webhook_id: '0d9c3f4e-5a6b-4c7d-8e9f-a0b1c2d3e4f5',
  name: 'Orders',
  url: 'https://hooks.example.com/envoi',
  reason: 'gone',
  consecutive_failures: 1,
  last_status: 410,
  disabled_at: '2026-11-25T10:00:00.000Z',
};

describe('eventData', () => {
  it('answers the validated data of an event of its type', () => {
    expect(decode({ id: 'e1', type: 'webhook.disabled', data })).toMatchObject(data);
    expect(
      decode({ id: 'e1', type: 'webhook.disabled', data: { ...data, last_status: null } }),
    ).toMatchObject({ last_status: null });
  });

  it('refuses another type or bad data as unprocessable (never retried)', () => {
    expect(() => decode({ id: 'e1', type: 'webhook.enabled', data })).toThrow(
      UnprocessableMessageError,
    );
    expect(() =>
      decode({ id: 'e1', type: 'webhook.disabled', data: { ...data, reason: 'bored' } }),
    ).toThrow(UnprocessableMessageError);
    expect(() => decode(null)).toThrow(UnprocessableMessageError);
  });
});

describe('eventData of route.disabled', () => {
  const decodeRoute = eventData('route.disabled', RouteDisabledData);
  const routeData = {
    account_id: data.account_id,
    route_id: '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f',
    name: 'Support',
    url: 'https://inbound.example.com/envoi',
    consecutive_failures: 100,
    last_status: null,
    disabled_at: '2026-11-25T12:00:00.000Z',
  };

  it('answers the data as the routes service publishes it, and refuses a bad route id', () => {
    expect(decodeRoute({ id: 'e2', type: 'route.disabled', data: routeData })).toMatchObject(
      routeData,
    );
    expect(() =>
      decodeRoute({ id: 'e2', type: 'route.disabled', data: { ...routeData, route_id: 'r1' } }),
    ).toThrow(UnprocessableMessageError);
  });
});
