import { randomUUID } from 'node:crypto';

import type { MessageRoutingPayload } from '@envoi/contracts-routes';

import type { RouteEntity } from './route.entity';

const SAMPLE_DOMAIN = 'example.com';
const SAMPLE_SENDER = 'customer@sample.envoi.invalid';
const SAMPLE_TEXT = 'Envoi sample message.routing (dev environments only).';

/** An address the route's pattern takes: its wildcard filled in, its domain or example.com. */
export function sampleRecipient(route: Pick<RouteEntity, 'recipient' | 'domainName'>): string {
  const local = route.recipient.split('@')[0] ?? '';
  const filled = local === '' ? 'support' : local.replace('*', 'sample');
  return `${filled}@${route.domainName ?? SAMPLE_DOMAIN}`;
}

/** Milliseconds padded to the nine fractional digits of every payload's timestamp. */
export function routingTimestamp(date: Date): string {
  return date.toISOString().replace(/Z$/, '000000Z');
}

/** A sample payload of the route, as webhooks.yaml's example shows one (every field present). */
export function sampleRoutingPayload(
  route: Pick<RouteEntity, 'id' | 'recipient' | 'domainName'>,
  now: Date,
): MessageRoutingPayload {
  const plainBody = `${SAMPLE_TEXT}\n`;
  return {
    type: 'message.routing',
    route_id: route.id,
    timestamp: routingTimestamp(now),
    data: {
      id: `sample-${randomUUID()}`,
      from: SAMPLE_SENDER,
      reply_to: SAMPLE_SENDER,
      to: sampleRecipient(route),
      subject: 'Envoi sample message',
      message_id: `<sample-${randomUUID()}@sample.envoi.invalid>`,
      size: Buffer.byteLength(plainBody),
      spam_score: 0,
      bounce: false,
      cc: '',
      date: now.toUTCString().replace('GMT', '+0000'),
      in_reply_to: '',
      references: '',
      auto_submitted: '',
      html_body: `<p>${SAMPLE_TEXT}</p>`,
      plain_body: plainBody,
      reply_from_plain_body: plainBody,
      attachments: [],
      headers: { Subject: 'Envoi sample message' },
    },
  };
}
