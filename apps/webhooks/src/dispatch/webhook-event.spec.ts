import { UnprocessableMessageError } from '@envoi/shared-nats';

import {
  decodeWebhookEvent,
  decodeWebhookEvents,
  webhookBody,
  withNanoseconds,
} from './webhook-event';
import { missingFields, WEBHOOK_EVENT_DURABLES } from './webhook-event-sources';

const ACCOUNT = '4cdd7bdd-294e-4762-892f-83d40abf5a87';
const MESSAGE = {
  account_id: ACCOUNT,
  event: 'on_delivered',
  from: 'Sender@Mail.Example.COM',
  recipient: 'to@example.net',
  subject: 'Hi',
  message_id_header: '<m@example.com>',
  id: 'b4c2f0a4-0c3e-4d8c-9a55-0f0e4d5c0a11',
  status: 'Delivered',
  recipients: [{ email: 'to@example.net', result: 'delivered' }],
};

describe('decodeWebhookEvent', () => {
  it('keeps exactly the fields of webhooks.yaml, is_bot false for a message event', () => {
    const event = decodeWebhookEvent({
      id: 'evt-1',
      type: 'message.delivered',
      timestamp: '2026-05-06T09:49:16.687Z',
      data: MESSAGE,
    });
    expect(event).toEqual({
      id: 'evt-1',
      type: 'message.delivered',
      flag: 'on_delivered',
      accountId: ACCOUNT,
      domain: 'mail.example.com',
      timestamp: '2026-05-06T09:49:16.687000000Z',
      missing: [],
      data: {
        account_id: ACCOUNT,
        event: 'on_delivered',
        from: 'Sender@Mail.Example.COM',
        recipient: 'to@example.net',
        subject: 'Hi',
        message_id_header: '<m@example.com>',
        id: MESSAGE.id,
        is_bot: false,
      },
    });
  });

  it("scopes inbound mail's reception by its recipient's domain and leaves direction out", () => {
    const event = decodeWebhookEvent({
      id: 'evt-3',
      type: 'message.reception',
      timestamp: '2026-05-06T09:49:16Z',
      data: {
        ...MESSAGE,
        event: 'on_reception',
        from: 'someone@remote.example',
        recipient: 'support@Customer.Example',
        is_bot: false,
        direction: 'inbound',
      },
    });
    expect(event.domain).toBe('customer.example');
    expect(event.missing).toEqual([]);
    expect(Object.keys(event.data)).not.toContain('direction');
    const sent = decodeWebhookEvent({ ...event, data: { ...MESSAGE, event: 'on_reception' } });
    expect(sent.domain).toBe('mail.example.com');
  });

  it('keeps the tracking fields of a click', () => {
    const event = decodeWebhookEvent({
      id: 'evt-2',
      type: 'message.clicked',
      timestamp: '2026-05-06T09:49:16Z',
      data: {
        ...MESSAGE,
        event: 'on_clicked',
        url: 'https://x.test/',
        ip: '1.2.3.4',
        user_agent: 'UA',
        is_bot: true,
      },
    });
    expect(Object.keys(event.data)).toEqual([
      'account_id',
      'event',
      'from',
      'recipient',
      'subject',
      'message_id_header',
      'id',
      'url',
      'user_agent',
      'ip',
      'is_bot',
    ]);
    expect(event.data['is_bot']).toBe(true);
    expect(event.timestamp).toBe('2026-05-06T09:49:16.000000000Z');
  });

  it.each([
    [
      'suppression.created',
      { account_id: ACCOUNT, sending_domain: 'Example.com.' },
      'on_suppression_created',
      'example.com',
    ],
    [
      'suppression.created',
      { account_id: ACCOUNT, sending_domain: null },
      'on_suppression_created',
      null,
    ],
    [
      'domain.dns_error',
      { account_id: ACCOUNT, domain: 'dns.example' },
      'on_dns_error',
      'dns.example',
    ],
  ])('finds the domain of %s', (type, data, flag, domain) => {
    const event = decodeWebhookEvent({ id: 'e', type, timestamp: '2026-05-06T09:49:16Z', data });
    expect(event).toMatchObject({ flag, domain });
  });

  it.each([
    ['not an object', 'x'],
    ['no id', { type: 'message.delivered', timestamp: '2026-01-01T00:00:00Z', data: MESSAGE }],
    [
      'an unknown type',
      { id: 'e', type: 'domain.deleted', timestamp: '2026-01-01T00:00:00Z', data: MESSAGE },
    ],
    [
      'a bad timestamp',
      { id: 'e', type: 'message.delivered', timestamp: 'yesterday', data: MESSAGE },
    ],
    [
      'no account',
      {
        id: 'e',
        type: 'message.delivered',
        timestamp: '2026-01-01T00:00:00Z',
        data: { ...MESSAGE, account_id: 'x' },
      },
    ],
  ])('refuses %s as unprocessable', (_case, payload) => {
    expect(() => decodeWebhookEvent(payload)).toThrow(UnprocessableMessageError);
  });
});

describe('decodeWebhookEvents', () => {
  const reception = (id: string, recipient: string) => ({
    id,
    type: 'message.reception',
    timestamp: '2026-05-06T09:49:16.5Z',
    data: { ...MESSAGE, event: 'on_reception', recipient, is_bot: false },
  });

  it('reads a reception batch as its events, each with its own id, as if they came alone', () => {
    const events = decodeWebhookEvents({
      id: 'batch-1',
      type: 'message.reception_batch',
      timestamp: '2026-05-06T09:49:16.5Z',
      data: {
        account_id: ACCOUNT,
        events: [reception('r-1', 'one@example.net'), reception('r-2', 'two@example.net')],
      },
    });
    expect(events).toEqual([
      decodeWebhookEvent(reception('r-1', 'one@example.net')),
      decodeWebhookEvent(reception('r-2', 'two@example.net')),
    ]);
    expect(events.map((event) => [event.id, event.type, event.data['recipient']])).toEqual([
      ['r-1', 'message.reception', 'one@example.net'],
      ['r-2', 'message.reception', 'two@example.net'],
    ]);
  });

  it('reads an outcome batch as its events, of any types, each as if it came alone', () => {
    const delivered = {
      id: 'o-1',
      type: 'message.delivered',
      timestamp: '2026-05-06T09:49:17Z',
      data: MESSAGE,
    };
    const bounced = {
      id: 'o-2',
      type: 'message.bounced',
      timestamp: '2026-05-06T09:49:18Z',
      data: { ...MESSAGE, event: 'on_bounced' },
    };
    const events = decodeWebhookEvents({
      id: 'batch-3',
      type: 'message.outcome_batch',
      timestamp: '2026-05-06T09:49:18Z',
      data: { events: [delivered, bounced] },
    });
    expect(events).toEqual([decodeWebhookEvent(delivered), decodeWebhookEvent(bounced)]);
    expect(events.map((event) => [event.id, event.type])).toEqual([
      ['o-1', 'message.delivered'],
      ['o-2', 'message.bounced'],
    ]);
  });

  it('leaves out an event of an outcome batch no retry can help, and reads the others', () => {
    const delivered = {
      id: 'o-4',
      type: 'message.delivered',
      timestamp: '2026-05-06T09:49:17Z',
      data: MESSAGE,
    };
    const events = decodeWebhookEvents({
      id: 'batch-5',
      type: 'message.outcome_batch',
      timestamp: '2026-05-06T09:49:18Z',
      data: { events: [{ id: 'o-5', type: 'message.delivered' }, delivered] },
    });
    expect(events).toEqual([decodeWebhookEvent(delivered)]);
  });

  it.each([
    ['without events', {}],
    ['with no event', { events: [] }],
    ['with no event it can read', { events: [{ id: 'o-3', type: 'message.delivered' }] }],
  ])('refuses an outcome batch %s as unprocessable', (_case, data) => {
    expect(() =>
      decodeWebhookEvents({
        id: 'batch-4',
        type: 'message.outcome_batch',
        timestamp: '2026-05-06T09:49:16Z',
        data,
      }),
    ).toThrow(UnprocessableMessageError);
  });

  it('reads any other message as its one event', () => {
    const event = reception('r-3', 'three@example.net');
    expect(decodeWebhookEvents(event)).toEqual([decodeWebhookEvent(event)]);
  });

  it.each([
    ['without events', { account_id: ACCOUNT }],
    ['with no event', { account_id: ACCOUNT, events: [] }],
    [
      'with a bad event',
      { account_id: ACCOUNT, events: [{ id: 'r-4', type: 'message.reception' }] },
    ],
  ])('refuses a batch %s as unprocessable', (_case, data) => {
    expect(() =>
      decodeWebhookEvents({
        id: 'batch-2',
        type: 'message.reception_batch',
        timestamp: '2026-05-06T09:49:16Z',
        data,
      }),
    ).toThrow(UnprocessableMessageError);
  });
});

describe('the payload', () => {
  it('is {type, webhook_id, timestamp, data} in that order', () => {
    const event = decodeWebhookEvent({
      id: 'evt-1',
      type: 'message.delivered',
      timestamp: '2026-05-06T09:49:16.687Z',
      data: MESSAGE,
    });
    expect(Object.keys(JSON.parse(webhookBody(event, 'w-1')) as object)).toEqual([
      'type',
      'webhook_id',
      'timestamp',
      'data',
    ]);
  });

  it('writes the body JSON.stringify would, once per webhook, from data serialised once', () => {
    const event = decodeWebhookEvent({
      id: 'e',
      type: 'message.delivered',
      timestamp: '2026-05-06T09:49:16Z',
      data: { ...MESSAGE, subject: 'Quotes " and \\ and \u2028 ünïcode' },
    });
    const expected = (webhookId: string) =>
      JSON.stringify({
        type: event.type,
        webhook_id: webhookId,
        timestamp: event.timestamp,
        data: event.data,
      });

    expect(webhookBody(event, 'w-1')).toBe(expected('w-1'));
    expect(webhookBody(event, 'w-"2"')).toBe(expected('w-"2"'));
  });

  it('keeps a null the event carries rather than leaving the field out', () => {
    const event = decodeWebhookEvent({
      id: 'e',
      type: 'suppression.created',
      timestamp: '2026-05-06T09:49:16Z',
      data: { account_id: ACCOUNT, reason: null, sending_domain: null },
    });
    expect(event.data).toEqual({ account_id: ACCOUNT, reason: null, sending_domain: null });
    expect(event.missing).toContain('reason');
  });

  it('writes timestamps with nanoseconds in UTC', () => {
    expect(withNanoseconds('2026-05-06T09:49:16.687031577Z')).toBe(
      '2026-05-06T09:49:16.687031577Z',
    );
    expect(withNanoseconds('2026-05-06T11:49:16.5+02:00')).toBe('2026-05-06T09:49:16.500000000Z');
  });

  it('names the required fields an event lacks', () => {
    expect(missingFields('message.opened', MESSAGE)).toEqual(['user_agent', 'ip']);
    expect(missingFields('message.delivered', MESSAGE)).toEqual([]);
    expect(missingFields('suppression.created', { account_id: ACCOUNT, reason: null })).toEqual([
      'recipient',
      'created_at',
      'expires_at',
      'reason',
      'sending_domain',
    ]);
  });

  it('has one durable consumer per subject, the outcome batch one for all the delivery types', () => {
    expect(Object.keys(WEBHOOK_EVENT_DURABLES)).toHaveLength(14);
    expect(WEBHOOK_EVENT_DURABLES['webhooks-message-outcome-batch']?.name).toBe(
      'events.message.outcome_batch.v1',
    );
    expect(WEBHOOK_EVENT_DURABLES['webhooks-message-reception-batch']?.name).toBe(
      'events.message.reception_batch.v1',
    );
    expect(WEBHOOK_EVENT_DURABLES['webhooks-inbound-reception']?.name).toBe(
      'events.inbound.reception.v1',
    );
    expect(WEBHOOK_EVENT_DURABLES['webhooks-message-suppressed-at-accept']?.name).toBe(
      'events.message.suppressed_at_accept.v1',
    );
    expect(WEBHOOK_EVENT_DURABLES['webhooks-message-transient-error']?.name).toBe(
      'events.message.transient_error.v1',
    );
    expect(WEBHOOK_EVENT_DURABLES['webhooks-domain-dns-error']?.name).toBe(
      'events.domain.dns_error.v1',
    );
  });
});
