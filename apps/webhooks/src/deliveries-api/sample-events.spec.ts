import { randomUUID } from 'node:crypto';

import { WEBHOOK_EVENT_TYPE_NAMES } from '@envoi/contracts-webhooks';
import { WebhookPayloadValidator } from '@envoi/shared-testing';

import { webhookBody } from '../dispatch/webhook-event';
import { WEBHOOK_EVENT_SOURCES } from '../dispatch/webhook-event-sources';
import { sampleEvent } from './sample-events';

describe('sampleEvent', () => {
  const validator = new WebhookPayloadValidator();
  const accountId = randomUUID();
  const now = new Date('2026-11-25T10:00:00.123Z');

  it.each(WEBHOOK_EVENT_TYPE_NAMES)('%s: a payload webhooks.yaml accepts', (type) => {
    const event = sampleEvent(type, accountId, now);
    const payload = JSON.parse(webhookBody(event, randomUUID())) as { type: string };
    expect(payload.type).toBe(type);
    expect(validator.violations(type, payload)).toEqual([]);
  });

  it("carries the caller's account, the type's flag and a sample id", () => {
    const event = sampleEvent('message.opened', accountId, now);
    expect(event.data).toMatchObject({
      account_id: accountId,
      event: 'on_opened',
      id: expect.stringMatching(/^sample-/) as string,
      is_bot: false,
    });
    expect(event.id).toMatch(/^sample-[0-9a-f-]{36}$/);
    expect(event.timestamp).toBe('2026-11-25T10:00:00.123000000Z');
  });

  it('gives every event its own id', () => {
    const ids = new Set([1, 2, 3].map(() => sampleEvent('message.delivered', accountId, now).id));
    expect(ids.size).toBe(3);
  });

  it('sends only the fields webhooks.yaml lists for a non-message event', () => {
    expect(Object.keys(sampleEvent('domain.dns_error', accountId, now).data)).toEqual(
      WEBHOOK_EVENT_SOURCES['domain.dns_error'].fields,
    );
  });
});
