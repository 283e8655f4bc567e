import { randomUUID } from 'node:crypto';

import type { MessageDeliveredEvent } from '@envoi/contracts-delivery';

/**
 * The events both blocks of `npm run bench:webhooks` deliver: `message.delivered` events of the
 * EVENTS stream as the delivery service publishes them, each from one of the benchmark's sending
 * domains, so it reaches the global webhook and that domain's scoped one. Envoi gets them in
 * `message.outcome_batch` stream messages (webhook-bench-batches.ts).
 */

/** One endpoint of the benchmark's receiver and the webhook that calls it. */
export interface BenchEndpoint {
  /** The receiver's path (`/<name>`). */
  name: string;
  url: string;
  webhookId: string;
  secret: string;
  /** The domain of a scoped webhook; null for the global one. */
  domain: string | null;
}

/**
 * An event as the delivery service puts it on the EVENTS stream (`events.message.delivered.v1`),
 * complete: the messages and suppressions services consume the same events, and one they cannot
 * decode would cost them a logged error and a dead letter each, work no real event causes.
 */
export type StreamEvent = MessageDeliveredEvent;

export function streamEvent(accountId: string, domain: string, index: number): StreamEvent {
  const messageId = randomUUID();
  const recipient = `rcpt${index}@example.net`;
  const time = new Date().toISOString();
  return {
    id: randomUUID(),
    type: 'message.delivered',
    timestamp: time,
    data: {
      account_id: accountId,
      event: 'on_delivered',
      from: `sender@${domain}`,
      recipient,
      subject: `Benchmark message ${index}`,
      message_id_header: `<${messageId}@${domain}>`,
      id: messageId,
      is_bot: false,
      status: 'Delivered',
      attempt: {
        time,
        remote_host: 'mx.example.net',
        reply: '250 2.0.0 OK',
        status: 'Delivered',
        attempt: 1,
      },
      sandbox: false,
      recipients: [
        {
          email: recipient,
          result: 'delivered',
          remote_host: 'mx.example.net',
          reply: '250 2.0.0 OK',
        },
      ],
    },
  };
}

/** The endpoints an event from `domain` reaches: the global ones and the domain's scoped ones. */
export function endpointsOf(endpoints: readonly BenchEndpoint[], domain: string): BenchEndpoint[] {
  return endpoints.filter((endpoint) => endpoint.domain === null || endpoint.domain === domain);
}

/** The webhook body Envoi sends for the event (webhooks.yaml: type, webhook_id, timestamp, data). */
export function webhookBodyOf(event: StreamEvent, webhookId: string): string {
  const { account_id, event: flag, from, recipient, subject, message_id_header, id } = event.data;
  return JSON.stringify({
    type: event.type,
    webhook_id: webhookId,
    timestamp: event.timestamp.replace(
      /\.(\d{1,9})Z$/,
      (_, digits: string) => `.${digits.padEnd(9, '0')}Z`,
    ),
    data: {
      account_id,
      event: flag,
      from,
      recipient,
      subject,
      message_id_header,
      id,
      is_bot: false,
    },
  });
}
