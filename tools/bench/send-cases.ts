// The measured cases of `npm run bench:send`: request bodies and the check of every answer.
import { BARE_ACCEPT_PATH } from './bare-accept.constants';
import type { BenchAccount, BenchServer } from './bench-platform';
import type { LoadCase } from './load';

export type SendCaseId = 'bare1' | 'bare100' | 'envoi1' | 'envoi100' | 'envoi100Subs';

export interface SendCase extends LoadCase {
  id: SendCaseId;
  /** Recipients per request: each 202 accepts this many messages. */
  recipients: number;
  /** The bare case this one is divided by. */
  bare: 'bare1' | 'bare100' | null;
  /** Which set of answered message ids this case adds to. */
  target: LoadCase['target'] & { system: 'envoi' | 'bare' };
}

/** Message ids (bare uuids) of every accepted message a 202 answered, per system. */
export interface AnsweredIds {
  envoi: Set<string>;
  bare: Set<string>;
}

const PARAGRAPHS = [
  'Thank you for your order. We have received it and our team is preparing it for dispatch; you will receive another message with the tracking number as soon as the parcel leaves our warehouse.',
  'Your order contains three items: a stainless steel water bottle (750 ml), a set of four bamboo cutlery pieces with a cotton pouch, and a recycled paper notebook with 120 dotted pages.',
  'If anything is missing or arrives damaged, reply to this message within 30 days and we will send a replacement or refund the item, whichever you prefer, without asking you to return it.',
  'You can follow every order, change your delivery address before dispatch and download invoices from your account page. Questions about this order? Our support team answers within one working day.',
];

/** ~2 KB of text and HTML together; templated: the same text with substitution placeholders. */
function content(templated: boolean): { subject: string; text: string; html: string } {
  const greeting = templated ? 'Hello {{ name }},' : 'Hello Alex,';
  const reference = templated ? 'Order {{ order }} ({{ shop }})' : 'Order A-10042 (Envoi Shop)';
  const paragraphs = [reference, ...PARAGRAPHS];
  return {
    subject: templated ? 'Your order {{ order }} is confirmed' : 'Your order A-10042 is confirmed',
    text: [greeting, ...paragraphs, 'Best regards,\nThe Envoi Shop team'].join('\n\n'),
    html: [
      '<html><body style="font-family:sans-serif">',
      `<p>${greeting}</p>`,
      ...paragraphs.map((paragraph) => `<p>${paragraph}</p>`),
      '<p>Best regards,<br>The Envoi Shop team</p></body></html>',
    ].join('\n'),
  };
}

interface Recipient {
  email: string;
  substitutions?: Record<string, string>;
}

function recipients(count: number, runId: string, substitutions: boolean): Recipient[] {
  return Array.from({ length: count }, (_, index) => ({
    email: `r${index}-${runId}@example.net`,
    ...(substitutions
      ? { substitutions: { name: `Customer ${index}`, order: `A-${10_000 + index}` } }
      : {}),
  }));
}

function sendBody(sender: string, to: Recipient[], templated: boolean): string {
  const { subject, text, html } = content(templated);
  return JSON.stringify({
    from: { email: sender, name: 'Envoi Shop' },
    recipients: to,
    subject,
    text_content: text,
    html_content: html,
    ...(templated ? { substitutions: { shop: 'Envoi Shop' } } : {}),
  });
}

/** The size of the content one message carries (text + HTML), for the report. */
export function contentBytes(): number {
  const { text, html } = content(false);
  return Buffer.byteLength(text) + Buffer.byteLength(html);
}

const MESSAGE_ID = /^<([0-9a-f-]{36})@[^>]+>$/;

/**
 * A 202 whose `data` has one entry per recipient, each `queued` with a `<uuid@domain>` id; the
 * ids go into `answered` (what the database must hold afterwards).
 */
function acceptCheck(
  expected: number,
  answered: Set<string>,
): (status: number, body: string) => string | null {
  return (status, body) => {
    if (status !== 202) return `status ${status}: ${body.slice(0, 300)}`;
    let data: unknown;
    try {
      data = (JSON.parse(body) as { data?: unknown }).data;
    } catch {
      return `body is not JSON: ${body.slice(0, 200)}`;
    }
    if (!Array.isArray(data) || data.length !== expected) {
      return `expected ${expected} data entries: ${body.slice(0, 300)}`;
    }
    const ids: string[] = [];
    for (const entry of data as Array<{ status?: unknown; id?: unknown }>) {
      const id = typeof entry.id === 'string' ? MESSAGE_ID.exec(entry.id)?.[1] : undefined;
      if (entry.status !== 'queued' || id === undefined) {
        return `entry not queued with an id: ${JSON.stringify(entry).slice(0, 300)}`;
      }
      ids.push(id);
    }
    for (const id of ids) answered.add(id);
    return null;
  };
}

export function defineSendCases(
  servers: { envoi: BenchServer; bare: BenchServer },
  account: BenchAccount,
  domain: string,
  ca: string,
  runId: string,
  answered: AnsweredIds,
): SendCase[] {
  const sender = `orders@${domain}`;
  const target = (server: BenchServer, system: 'envoi' | 'bare') => ({
    name: server.name,
    baseUrl: server.baseUrl,
    ca,
    system,
  });
  const envoi = target(servers.envoi, 'envoi');
  const bare = target(servers.bare, 'bare');
  const json = { 'content-type': 'application/json' };
  const envoiRequest = (body: string) => ({
    method: 'POST' as const,
    path: `/v2/accounts/${account.accountId}/messages`,
    headers: { ...json, authorization: `Bearer ${account.apiKey}` },
    body,
  });
  const bareRequest = (body: string) => ({
    method: 'POST' as const,
    path: BARE_ACCEPT_PATH,
    headers: json,
    body,
  });
  const one = sendBody(sender, recipients(1, runId, false), false);
  const hundred = sendBody(sender, recipients(100, runId, false), false);
  const hundredSubs = sendBody(sender, recipients(100, runId, true), true);
  const defined = [
    { id: 'bare1', name: '1 recipient', target: bare, body: one, recipients: 1, bare: null },
    {
      id: 'bare100',
      name: '100 recipients',
      target: bare,
      body: hundred,
      recipients: 100,
      bare: null,
    },
    { id: 'envoi1', name: '1 recipient', target: envoi, body: one, recipients: 1, bare: 'bare1' },
    {
      id: 'envoi100',
      name: '100 recipients',
      target: envoi,
      body: hundred,
      recipients: 100,
      bare: 'bare100',
    },
    {
      id: 'envoi100Subs',
      name: '100 recipients, substitutions',
      target: envoi,
      body: hundredSubs,
      recipients: 100,
      bare: 'bare100',
    },
  ] as const;
  return defined.map((definition) => ({
    id: definition.id,
    name: definition.name,
    target: definition.target,
    recipients: definition.recipients,
    bare: definition.bare,
    request: (definition.target.system === 'envoi' ? envoiRequest : bareRequest)(definition.body),
    expect: { status: 202 },
    checkResponse: acceptCheck(definition.recipients, answered[definition.target.system]),
  }));
}
