import { randomUUID } from 'node:crypto';

import type { DomainRecord } from '@envoi/contracts-domains';
import type { CreateMessageResult, MessageRecord } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';
import { simpleParser } from 'mailparser';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { request } from '../support/api-client';
import { createVerifiedDomain } from '../support/domains';
import { receiptsFor } from '../support/smtp-receipts';

const LANDING = 'https://example.com/landing?a=1&b=2';

const HTML = [
  '<html><body>',
  '<p>Hello <a href="https://example.com/landing?a=1&amp;b=2">landing</a></p>',
  '<p><a data-as-no-track href="https://example.com/private">private</a></p>',
  '<p><a href="mailto:help@example.com">mail us</a> <a href=https://example.com/unquoted>x</a></p>',
  '</body></html>',
].join('\n');

/**
 * Open and click tracking end to end (platform notes 3.3): the delivered HTML carries a pixel
 * and rewritten links that point at the gateway's public tracking routes; loading and following
 * them counts on the message; a click goes to the URL the message was sent with.
 */
describe('open and click tracking', () => {
  let session: AccountSession;
  let domain: DomainRecord;

  beforeAll(async () => {
    session = await createAccountSession();
    domain = await createVerifiedDomain(session);
  });

  afterAll(async () => {
    await closeSessions();
  });

  async function send(to: string, tracking: { open: boolean; click: boolean }): Promise<string> {
    const response = await session.api.post<CreateMessageResult>(session.path('/messages'), {
      from: { email: `app@${domain.domain}` },
      recipients: [{ email: to }],
      subject: 'Tracked',
      text_content: 'Hello https://example.com/in-text',
      html_content: HTML,
      tracking,
    });
    expect(response.status).toBe(202);
    return response.body.data[0]?.id ?? '';
  }

  async function deliveredHtml(to: string): Promise<string> {
    const [receipt] = await pollUntil(
      () => receiptsFor(to),
      (found) => found.length > 0,
      { timeoutMs: 20_000, what: `the message to ${to} in the sink` },
    );
    const parsed = await simpleParser(receipt?.raw ?? '');
    return typeof parsed.html === 'string' ? parsed.html : '';
  }

  async function message(id: string): Promise<MessageRecord> {
    const response = await session.api.get<MessageRecord>(
      session.path(`/messages/${encodeURIComponent(id)}`),
    );
    return response.body;
  }

  /** A tracking route of the gateway (not an API operation: outside the contract). */
  function visit(url: string) {
    const { pathname } = new URL(url);
    return request<unknown>('GET', pathname, {
      contract: 'skip',
      headers: { 'user-agent': 'Mozilla/5.0 (e2e)' },
    });
  }

  it('counts opens and clicks and redirects to the link the message was sent with', async () => {
    const to = `tracked-${randomUUID().slice(0, 8)}@example.net`;
    const id = await send(to, { open: true, click: true });
    const html = await deliveredHtml(to);

    const pixel = /<img src="([^"]+\/t\/o\/[A-Za-z0-9_-]+)"/.exec(html)?.[1];
    const clicks = [...html.matchAll(/href="([^"]+\/t\/c\/[A-Za-z0-9_-]+)"/g)].map((m) => m[1]);
    expect(pixel).toBeDefined();
    expect(clicks).toHaveLength(1);
    // Not tracked: the marked link, mailto, an unquoted href, and links in the text part.
    expect(html).toContain('href="https://example.com/private"');
    expect(html).toContain('href="mailto:help@example.com"');
    expect(html).toContain('href=https://example.com/unquoted');

    const opened = await visit(pixel ?? '');
    expect(opened.status).toBe(200);
    expect(opened.headers['content-type']).toBe('image/gif');
    const clicked = await visit(clicks[0] ?? '');
    expect(clicked.status).toBe(302);
    expect(clicked.headers['location']).toBe(LANDING);
    await visit(clicks[0] ?? '');

    const counted = await pollUntil(
      () => message(id),
      (record) => record.open_count === 1 && record.click_count === 2,
      { what: 'the open and the clicks to be counted' },
    );
    expect(counted).toMatchObject({ open_count: 1, click_count: 2 });
  });

  it('answers 404 for a token that was altered or is not a tracking token', async () => {
    const to = `tracked-${randomUUID().slice(0, 8)}@example.net`;
    await send(to, { open: true, click: true });
    const html = await deliveredHtml(to);
    const click = /href="([^"]+\/t\/c\/([A-Za-z0-9_-]+))"/.exec(html);
    const token = click?.[2] ?? '';
    const altered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;

    for (const path of [`/t/c/${altered}`, `/t/o/${altered}`, '/t/c/nope', '/t/o/x.y']) {
      const response = await request<{ message: string }>('GET', path, { contract: 'skip' });
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(response.body).toEqual({ message: 'no such tracking link' });
      expect(response.headers['location']).toBeUndefined();
    }
    // Longer than any route parameter may be: refused before routing.
    const long = await request<{ message: string }>('GET', `/t/c/${'x'.repeat(2_000)}`, {
      contract: 'skip',
    });
    expect(long.status).toBe(414);
    expect(long.body).toEqual({ message: expect.any(String) as unknown });
  });

  it('leaves untracked mail alone', async () => {
    const to = `untracked-${randomUUID().slice(0, 8)}@example.net`;
    await send(to, { open: false, click: false });
    const html = await deliveredHtml(to);
    expect(html).not.toMatch(/\/t\/[oc]\//);
    expect(html).toContain('href="https://example.com/landing?a=1&amp;b=2"');
  });

  // Last: it spends this client's tracking allowance (RATE_LIMIT_TRACKING_*: 20/s, burst 100).
  it('rate limits a flood of tracking requests from one client', async () => {
    const statuses: number[] = [];
    for (let batch = 0; batch < 4; batch++) {
      const responses = await Promise.all(
        Array.from({ length: 60 }, () =>
          request<{ message: string }>('GET', '/t/o/flood', { contract: 'skip' }),
        ),
      );
      statuses.push(...responses.map((response) => response.status));
      const limited = responses.find((response) => response.status === 429);
      if (limited) expect(limited.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    }

    expect(new Set(statuses)).toEqual(new Set([404, 429]));
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
  });
});
