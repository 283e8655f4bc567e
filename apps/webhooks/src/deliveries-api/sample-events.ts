import { randomUUID } from 'node:crypto';

import type { WebhookEventType } from '@envoi/contracts-webhooks';

import { type WebhookEvent, withNanoseconds } from '../dispatch/webhook-event';
import { flagOf, webhookData } from '../dispatch/webhook-event-sources';

/** Ids and addresses that say they are samples: nothing real carries them. */
const SAMPLE_MESSAGE_ID = 'sample-407926766d2711f09b30960002cafe7c';
const SAMPLE_SENDING_DOMAIN = 'sample.envoi.invalid';
const SAMPLE_USER_AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36';
const SAMPLE_IP = '192.0.2.100';
const DAY_MS = 86_400_000;

function messageData(recipient = 'recipient@example.com'): Record<string, unknown> {
  return {
    from: `sender@${SAMPLE_SENDING_DOMAIN}`,
    recipient,
    subject: 'Envoi sample event (dev environments only)',
    message_id_header: `<${SAMPLE_MESSAGE_ID}@${SAMPLE_SENDING_DOMAIN}>`,
    id: SAMPLE_MESSAGE_ID,
  };
}

/** The data of each type's sample, as webhooks.yaml's examples show it (account and event aside). */
function sampleData(type: WebhookEventType, now: Date): Record<string, unknown> {
  switch (type) {
    case 'message.reception':
    case 'message.delivered':
    case 'message.transient_error':
    case 'message.bounced':
      return messageData();
    case 'message.failed':
      return messageData('invalid@nonexistent-domain.example');
    case 'message.suppressed':
      return messageData('bounced@example.com');
    case 'message.opened':
      return { ...messageData(), user_agent: SAMPLE_USER_AGENT, ip: SAMPLE_IP, is_bot: false };
    case 'message.clicked':
      return {
        ...messageData(),
        url: 'https://example.com/landing-page',
        user_agent: SAMPLE_USER_AGENT,
        ip: SAMPLE_IP,
        is_bot: false,
      };
    case 'suppression.created':
      return {
        recipient: 'bounced@example.com',
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + 30 * DAY_MS).toISOString(),
        reason: 'Too many hard bounces',
        sending_domain: SAMPLE_SENDING_DOMAIN,
      };
    case 'domain.dns_error':
      return {
        domain: SAMPLE_SENDING_DOMAIN,
        spf_valid: false,
        dkim_valid: false,
        dmarc_valid: false,
        dns_last_checked_at: now.toISOString(),
      };
  }
}

/** A sample event of `type` for the account, with its own `sample-` id (the webhook-id header). */
export function sampleEvent(type: WebhookEventType, accountId: string, now: Date): WebhookEvent {
  const flag = flagOf(type);
  const isMessageEvent = type.startsWith('message.');
  const data = {
    account_id: accountId,
    ...(isMessageEvent ? { event: flag } : {}),
    ...sampleData(type, now),
  };
  return {
    id: `sample-${randomUUID()}`,
    type,
    flag,
    accountId,
    domain: null,
    timestamp: withNanoseconds(now.toISOString()),
    data: webhookData(type, data),
    missing: [],
  };
}
