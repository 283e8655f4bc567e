import type { ApiKeyIpAllowListChangedData } from '@envoi/contracts-accounts';
import type { RouteDisabledData } from '@envoi/contracts-routes';
import type { WebhookDisabledData } from '@envoi/contracts-webhooks';

/** A notification's content, ready to send. */
export interface ComposedNotification {
  subject: string;
  text: string;
  html: string;
}

/** What every notification says besides its event. */
export interface NotificationContext {
  accountName: string;
  /** The dashboard's base URL (no trailing slash needed); empty: no link. */
  dashboardUrl: string;
}

/** One line of a notification's facts. */
interface Line {
  label: string;
  value: string;
}

interface Draft {
  subject: string;
  intro: string;
  lines: readonly Line[];
  action: string;
  /** The dashboard path of what the notification is about. */
  path: string;
}

/** The notification of a webhook the platform disabled (platform notes 2.9). */
export function composeWebhookDisabled(
  data: WebhookDisabledData,
  context: NotificationContext,
): ComposedNotification {
  const why =
    data.reason === 'gone'
      ? 'its endpoint answered 410 Gone'
      : `its endpoint failed ${data.consecutive_failures} consecutive times`;
  return render(
    {
      subject: `Webhook "${data.name}" was disabled`,
      intro: `The webhook "${data.name}" of your account "${context.accountName}" was disabled because ${why}. No more events are sent to it.`,
      lines: [
        { label: 'Webhook', value: `${data.name} (${data.webhook_id})` },
        { label: 'URL', value: data.url },
        { label: 'Last response', value: describeLastStatus(data.last_status) },
        { label: 'Disabled at', value: data.disabled_at },
      ],
      action: 'Once the endpoint works again, enable the webhook (set "enabled" to true).',
      path: `/webhooks/${data.webhook_id}`,
    },
    context,
  );
}

/** The notification of a route the platform disabled after failing calls (platform notes 2.8). */
export function composeRouteDisabled(
  data: RouteDisabledData,
  context: NotificationContext,
): ComposedNotification {
  return render(
    {
      subject: `Route "${data.name}" was disabled`,
      intro: `The route "${data.name}" of your account "${context.accountName}" was disabled because its URL failed ${data.consecutive_failures} consecutive times. Inbound mail for it is no longer accepted.`,
      lines: [
        { label: 'Route', value: `${data.name} (${data.route_id})` },
        { label: 'URL', value: data.url },
        { label: 'Last response', value: describeLastStatus(data.last_status) },
        { label: 'Disabled at', value: data.disabled_at },
      ],
      action: 'Once the URL works again, enable the route (set "enabled" to true).',
      path: `/routes/${data.route_id}`,
    },
    context,
  );
}

/** The notification of an API key's IP allow list being set or changed (platform notes 1.2). */
export function composeIpAllowListChanged(
  data: ApiKeyIpAllowListChangedData,
  context: NotificationContext,
): ComposedNotification {
  return render(
    {
      subject: `The IP allow list of API key "${data.label}" changed`,
      intro: `The IP allow list of the API key "${data.label}" of your account "${context.accountName}" changed.`,
      lines: [
        { label: 'API key', value: `${data.label} (${data.key_id})` },
        { label: 'Previous list', value: describeAllowList(data.previous_ip_allow_list) },
        { label: 'New list', value: describeAllowList(data.ip_allow_list) },
        { label: 'Changed by', value: describeChanger(data) },
        { label: 'Changed at', value: data.changed_at },
      ],
      action: 'If you did not expect this change, review the key and revoke it if needed.',
      path: `/api-keys/${data.key_id}`,
    },
    context,
  );
}

function describeLastStatus(status: number | null): string {
  return status === null ? 'none (no answer)' : `HTTP ${status}`;
}

/** An allow list as a sentence: an empty one lets every address use the key. */
export function describeAllowList(list: readonly string[]): string {
  return list.length === 0 ? 'none (any address may use the key)' : list.join(', ');
}

function describeChanger(data: ApiKeyIpAllowListChangedData): string {
  if (data.changed_by_key_id === null) return 'not recorded (the parent account or an operator)';
  const from = data.changed_from_ip === null ? '' : ` from ${data.changed_from_ip}`;
  return `API key ${data.changed_by_key_id}${from}`;
}

function render(draft: Draft, context: NotificationContext): ComposedNotification {
  const link = dashboardLink(context.dashboardUrl, draft.path);
  const text = [
    draft.intro,
    '',
    ...draft.lines.map((line) => `${line.label}: ${line.value}`),
    '',
    draft.action,
    ...(link ? [link] : []),
    '',
    FOOTER,
  ].join('\n');
  const html = [
    `<p>${escapeHtml(draft.intro)}</p>`,
    '<table>',
    ...draft.lines.map(
      (line) =>
        `<tr><th align="left">${escapeHtml(line.label)}</th><td>${escapeHtml(line.value)}</td></tr>`,
    ),
    '</table>',
    `<p>${escapeHtml(draft.action)}</p>`,
    ...(link ? [`<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>`] : []),
    `<p><small>${escapeHtml(FOOTER)}</small></p>`,
  ].join('\n');
  return { subject: draft.subject, text, html };
}

const FOOTER = 'You receive this as a member of the account on Envoi.';

function dashboardLink(base: string, path: string): string | null {
  return base === '' ? null : `${base.replace(/\/+$/, '')}${path}`;
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}
