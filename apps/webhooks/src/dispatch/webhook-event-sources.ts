import type { StreamSubject } from '@envoi/contracts-core';
import { normalizeDomainName } from '@envoi/contracts-core';
import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { DomainsStreamSubjects } from '@envoi/contracts-domains';
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { InboundStreamSubjects } from '@envoi/contracts-routes';
import { SuppressionsStreamSubjects } from '@envoi/contracts-suppressions';
import {
  WEBHOOK_EVENT_TYPES,
  type WebhookEventFlag,
  type WebhookEventType,
} from '@envoi/contracts-webhooks';

type EventData = Readonly<Record<string, unknown>>;

/** How the fan-out reads one event type of the EVENTS stream. */
export interface WebhookEventSource {
  /**
   * The stream subjects that carry it (a type may come from more than one service; a batch
   * subject carries several events of the type in one message, see decodeWebhookEvents).
   */
  subjects: readonly StreamSubject<unknown>[];
  /** The domain whose scoped webhooks receive the event; null: only global ones. */
  domainOf(data: EventData): string | null;
  /** The fields of the webhook payload's `data` (webhooks.yaml), in its order. */
  fields: readonly string[];
  /** Values sent when the stream event lacks the field. */
  defaults?: Readonly<Record<string, unknown>>;
}

const MESSAGE_FIELDS = [
  'account_id',
  'event',
  'from',
  'recipient',
  'subject',
  'message_id_header',
  'id',
] as const;

/** The reference sends `is_bot` on every message event, false but for a bot's open or click. */
const NOT_A_BOT = { is_bot: false };

const messageEvent = (
  subjects: readonly StreamSubject<unknown>[],
  extra: readonly string[] = [],
): WebhookEventSource => ({
  subjects,
  domainOf: (data) => domainOfAddress(data['from']),
  fields: [...MESSAGE_FIELDS, ...extra, 'is_bot'],
  defaults: NOT_A_BOT,
});

/**
 * Every event type webhooks receive, with its stream subject (`message.routing` comes with
 * inbound routes as one more entry).
 */
export const WEBHOOK_EVENT_SOURCES: Readonly<Record<WebhookEventType, WebhookEventSource>> = {
  // Sent mail (a send's events come in batches, older rows one by one), and mail the MX took
  // for a route: the latter is about its recipient's domain.
  'message.reception': {
    ...messageEvent([
      MessagesStreamSubjects.receptionBatch,
      MessagesStreamSubjects.reception,
      InboundStreamSubjects.reception,
    ]),
    domainOf: (data) =>
      domainOfAddress(data['direction'] === 'inbound' ? data['recipient'] : data['from']),
  },
  // Delivery outcomes come in batches of any of these types (events published one by one before
  // batches, or by a takeover, on each type's own subject).
  'message.delivered': messageEvent([
    DeliveryStreamSubjects.outcomeBatch,
    DeliveryStreamSubjects.delivered,
  ]),
  'message.transient_error': messageEvent([
    DeliveryStreamSubjects.outcomeBatch,
    DeliveryStreamSubjects.transientError,
  ]),
  'message.failed': messageEvent([
    DeliveryStreamSubjects.outcomeBatch,
    DeliveryStreamSubjects.failed,
  ]),
  'message.bounced': messageEvent([
    DeliveryStreamSubjects.outcomeBatch,
    DeliveryStreamSubjects.bounced,
  ]),
  // Found suppressed by a delivery attempt, or already at accept (then nothing is stored).
  'message.suppressed': messageEvent([
    DeliveryStreamSubjects.outcomeBatch,
    DeliveryStreamSubjects.suppressed,
    MessagesStreamSubjects.suppressedAtAccept,
  ]),
  'message.opened': messageEvent([MessagesStreamSubjects.opened], ['user_agent', 'ip']),
  'message.clicked': messageEvent([MessagesStreamSubjects.clicked], ['url', 'user_agent', 'ip']),
  'suppression.created': {
    subjects: [SuppressionsStreamSubjects.created],
    domainOf: (data) => domainName(data['sending_domain']),
    fields: ['account_id', 'recipient', 'created_at', 'expires_at', 'reason', 'sending_domain'],
  },
  'domain.dns_error': {
    subjects: [DomainsStreamSubjects.dnsError],
    domainOf: (data) => domainName(data['domain']),
    fields: [
      'domain',
      'account_id',
      'spf_valid',
      'dkim_valid',
      'dmarc_valid',
      'dns_last_checked_at',
    ],
  },
};

/**
 * The durable consumer of each subject: `webhooks-<entity>-<event>` from
 * `events.<entity>.<event>.v<N>` (one filter subject each; a subject several types list, once).
 */
export const WEBHOOK_EVENT_DURABLES: Readonly<Record<string, StreamSubject<unknown>>> =
  Object.fromEntries(
    Object.values(WEBHOOK_EVENT_SOURCES)
      .flatMap((source) => source.subjects)
      .map((subject) => [durableName(subject), subject]),
  );

function durableName(subject: StreamSubject<unknown>): string {
  const [, entity, event] = subject.name.split('.');
  return `webhooks-${entity}-${event}`.replaceAll('_', '-');
}

export function isWebhookEventType(type: unknown): type is WebhookEventType {
  return typeof type === 'string' && Object.hasOwn(WEBHOOK_EVENT_SOURCES, type);
}

export function flagOf(type: WebhookEventType): WebhookEventFlag {
  return WEBHOOK_EVENT_TYPES[type];
}

/** The payload's `data`: the listed fields of the event's data, in order. */
export function webhookData(type: WebhookEventType, data: EventData): Record<string, unknown> {
  const { fields, defaults = {} } = WEBHOOK_EVENT_SOURCES[type];
  return Object.fromEntries(
    fields
      .map((field) => [field, Object.hasOwn(data, field) ? data[field] : defaults[field]] as const)
      .filter(([, value]) => value !== undefined),
  );
}

/** The fields webhooks.yaml lists that the event lacks or leaves null (the producer's to fix). */
export function missingFields(type: WebhookEventType, data: EventData): string[] {
  const { fields, defaults = {} } = WEBHOOK_EVENT_SOURCES[type];
  return fields.filter((field) => data[field] == null && !Object.hasOwn(defaults, field));
}

function domainName(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? normalizeDomainName(value) : null;
}

function domainOfAddress(address: unknown): string | null {
  if (typeof address !== 'string') return null;
  const at = address.lastIndexOf('@');
  return at < 0 ? null : domainName(address.slice(at + 1).replace(/>.*$/, ''));
}
