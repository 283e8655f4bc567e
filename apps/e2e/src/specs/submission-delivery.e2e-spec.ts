import { randomUUID } from 'node:crypto';

import type { DomainRecord } from '@envoi/contracts-domains';
import {
  type MessageRecord,
  MessagesSubjects,
  type MessageSummaryRecord,
} from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';
import { simpleParser } from 'mailparser';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  rpc,
} from '../support/account-session';
import { request } from '../support/api-client';
import { dkimResults } from '../support/dkim';
import { createVerifiedDomain } from '../support/domains';
import { receiptsFor, type StoredReceipt } from '../support/smtp-receipts';

/** The header block and the body of a message (split at its first empty line). */
function split(raw: string): { headers: string; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  return { headers: raw.slice(0, end + 2), body: raw.slice(end + 4) };
}

/**
 * Issue 16, SMTP relay: a message submitted over SMTP (here through the messages service's
 * submission subject, as the smtp edge calls it) reaches the recipients' MX (the loopback sink)
 * as submitted: its body byte for byte, its headers in order with only the control headers gone
 * and the platform's own additions (DKIM-Signature, Message-ID and Date when missing) on top,
 * 8-bit content announced with BODY=8BITMIME, and a DKIM signature that verifies.
 */
describe('SMTP submissions are delivered as submitted (issue 16)', () => {
  let session: AccountSession;
  let domain: DomainRecord;

  beforeAll(async () => {
    session = await createAccountSession();
    domain = await createVerifiedDomain(session);
  });

  afterAll(async () => {
    await closeSessions();
  });

  async function delivered(
    to: string,
  ): Promise<{ summary: MessageSummaryRecord; receipt: StoredReceipt }> {
    const [summary] = await pollUntil(
      async () => {
        const listed = await session.api.get<{ data: MessageSummaryRecord[] }>(
          session.path(`/messages?recipient=${encodeURIComponent(to)}`),
        );
        return listed.body.data ?? [];
      },
      (found) => found[0]?.status === 'Delivered',
      { timeoutMs: 30_000, what: `the message to ${to} to be delivered` },
    );
    const [receipt, ...others] = receiptsFor(to);
    expect(others).toHaveLength(0);
    if (!summary || !receipt) throw new Error(`nothing delivered to ${to}`);
    return { summary, receipt };
  }

  /** Submits `raw` to `to` as the smtp edge does; answers its Message-ID. */
  async function submit(to: string, raw: string, bodyType: '7BIT' | '8BITMIME'): Promise<string> {
    const result = await (
      await rpc()
    ).request(MessagesSubjects.acceptSubmission, {
      account_id: session.accountId,
      credential_id: randomUUID(),
      credential_sandbox: false,
      envelope_from: `app@${domain.domain}`,
      recipients: [to],
      raw_base64: Buffer.from(raw).toString('base64'),
      submission_id: randomUUID(),
      body_type: bodyType,
    });
    expect(result.messages).toMatchObject([{ recipient: to, status: 'queued', error: null }]);
    return result.message_id_header;
  }

  /** A tracking route of the gateway (not an API operation: outside the contract). */
  function visit(url: string) {
    return request<unknown>('GET', new URL(url).pathname, {
      contract: 'skip',
      headers: { 'user-agent': 'Mozilla/5.0 (e2e)' },
    });
  }

  it('tracks opens and clicks in the HTML part only, as API mail, and signs what it sends', async () => {
    const to = `smtp-tracked-${randomUUID().slice(0, 8)}@example.net`;
    const text = [
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      'See https://example.org/in-text =E2=80=94 not tracked.',
    ].join('\r\n');
    const attachment = [
      'Content-Type: text/html; name="page.html"',
      'Content-Disposition: attachment; filename="page.html"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('<a href="https://example.org/attached">file</a>').toString('base64'),
    ].join('\r\n');
    const raw = [
      `From: <app@${domain.domain}>`,
      `To: <${to}>`,
      'Subject: Tracked over SMTP',
      'AhaSend-Track-Opens: true',
      'ahasend-track-clicks: true',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="mixed"',
      '',
      '--mixed',
      'Content-Type: multipart/alternative; boundary="alt"',
      '',
      '--alt',
      text,
      '--alt',
      'Content-Type: text/html; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '<html><body><p>Gr=C3=BC=C3=9Fe <a href=3D"https://example.org/landing?a=3D1">go</a></p>=',
      '</body></html>',
      '--alt--',
      '--mixed',
      attachment,
      '--mixed--',
      '',
    ].join('\r\n');

    await submit(to, raw, '7BIT');

    const { summary, receipt } = await delivered(to);
    expect(await dkimResults(receipt.raw)).toEqual([[domain.domain, 'pass']]);
    expect(receipt.raw).toContain(`\r\n--alt\r\n${text}\r\n--alt\r\n`);
    expect(receipt.raw).toContain(`\r\n--mixed\r\n${attachment}\r\n--mixed--\r\n`);
    const html = (await simpleParser(receipt.raw)).html || '';
    expect(html).toContain('<p>Grüße <a href="');
    const pixel = /<img src="([^"]+\/t\/o\/[A-Za-z0-9_-]+)"/.exec(html)?.[1];
    const clicks = [...html.matchAll(/href="([^"]+\/t\/c\/[A-Za-z0-9_-]+)"/g)].map((m) => m[1]);
    expect(pixel).toBeDefined();
    expect(clicks).toHaveLength(1);
    expect(html).not.toContain('https://example.org/landing');

    expect((await visit(pixel ?? '')).status).toBe(200);
    const clicked = await visit(clicks[0] ?? '');
    expect(clicked.status).toBe(302);
    expect(clicked.headers['location']).toBe('https://example.org/landing?a=1');
    const counted = await pollUntil(
      () =>
        session.api.get<MessageRecord>(session.path(`/messages/${encodeURIComponent(summary.id)}`)),
      (record) => record.body.open_count === 1 && record.body.click_count === 1,
      { what: 'the open and the click to be counted' },
    );
    expect(counted.body).toMatchObject({ open_count: 1, click_count: 1 });
    // The API shows the content as it was sent: tracked.
    expect((await simpleParser(counted.body.content ?? '')).html).toBe(html);
    expect(receipt.raw.endsWith(counted.body.content ?? '')).toBe(true);
  });

  it('delivers an 8-bit multipart message DKIM-signed, its body byte for byte, without its control headers', async () => {
    const to = `smtp-${randomUUID().slice(0, 8)}@example.net`;
    const client = [
      `From: "Café App" <app@${domain.domain}>`,
      `To: <${to}>`,
      'Subject: =?UTF-8?Q?R=C3=A9sum=C3=A9?=',
      'ahasend-tags: smtp,',
      '  e2e',
      'MIME-Version: 1.0',
      'AhaSend-Track-Opens: false',
      'Content-Type: multipart/alternative; boundary="b1"',
      'X-Client: kept',
    ];
    const body = [
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: 8bit',
      '',
      'Grüße aus Köln — 8-bit as sent.',
      '.leading dot stays',
      '',
      '--b1',
      'Content-Type: text/html; charset=utf-8',
      'Content-Transfer-Encoding: 8bit',
      '',
      '<p>Grüße <a href="https://example.org/x">link</a></p>',
      '--b1--',
      '',
    ].join('\r\n');
    const raw = `${client.join('\r\n')}\r\n\r\n${body}`;

    const messageIdHeader = await submit(to, raw, '8BITMIME');

    const { summary, receipt } = await delivered(to);
    expect(summary.tags).toEqual(['smtp', 'e2e']);
    expect(receipt.body).toBe('8BITMIME');
    const received = split(receipt.raw);
    expect(received.body).toBe(body);
    const kept = [
      `From: "Café App" <app@${domain.domain}>`,
      `To: <${to}>`,
      'Subject: =?UTF-8?Q?R=C3=A9sum=C3=A9?=',
      'MIME-Version: 1.0',
      'Content-Type: multipart/alternative; boundary="b1"',
      'X-Client: kept',
      '',
    ].join('\r\n');
    expect(received.headers.endsWith(kept)).toBe(true);
    expect(received.headers.toLowerCase()).not.toContain('ahasend');
    expect(received.headers).toContain(`Message-ID: ${messageIdHeader}\r\n`);
    expect(received.headers).toMatch(/^Date: .+ \+0000\r$/m);
    expect(await dkimResults(receipt.raw)).toEqual([[domain.domain, 'pass']]);

    // The API shows the message with the content it sent.
    const record = await session.api.get<MessageRecord>(
      session.path(`/messages/${encodeURIComponent(summary.id)}`),
    );
    expect(record.status).toBe(200);
    expect(receipt.raw.endsWith(record.body.content ?? '')).toBe(true);
    expect(record.body.subject).toBe('Résumé');
  });
});
