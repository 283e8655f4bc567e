import { randomBytes, randomUUID } from 'node:crypto';

import type { DomainRecord } from '@envoi/contracts-domains';
import type {
  CreateMessageResult,
  MessageRecord,
  MessageSummaryRecord,
  V1SendResult,
} from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';
import { simpleParser } from 'mailparser';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { type ApiResponse, request } from '../support/api-client';
import { dkimResults } from '../support/dkim';
import { createVerifiedDomain } from '../support/domains';
import { expectError } from '../support/expect-error';
import { receiptsFor, type StoredReceipt } from '../support/smtp-receipts';

/** RFC 5322 2.1.1: at most 998 octets a line, CRLF not counted. */
const MAX_LINE_OCTETS = 998;

const long = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length));

/** mailparser ends the last text part with a line break of its own. */
const withoutFinalNewline = (text: string | false | undefined) => (text || '').replace(/\n$/, '');

/** The octet lengths of the lines of `raw` that are longer than the limit. */
function overlongLines(raw: string): number[] {
  return raw
    .split('\r\n')
    .map((line) => Buffer.byteLength(line, 'utf8'))
    .filter((octets) => octets > MAX_LINE_OCTETS);
}

/**
 * Issue 11, "mail the platform emits": whatever a send request carries, the message that reaches
 * the recipients' MX (the loopback SMTP sink) has no line over 998 octets and still verifies, and
 * a customer cannot make it carry a trace or authentication header of its own. Those headers get
 * the 400 the other reserved headers (Received, DKIM-Signature, Return-Path) get: the reliability
 * plan (item 13) rejects reserved headers, and the spec and platform notes say nothing more.
 */
describe('mail the platform emits (issue 11)', () => {
  let session: AccountSession;
  let domain: DomainRecord;

  beforeAll(async () => {
    session = await createAccountSession();
    domain = await createVerifiedDomain(session);
  });

  afterAll(async () => {
    await closeSessions();
  });

  function recipient(prefix = 'r'): string {
    return `${prefix}-${randomUUID().slice(0, 8)}@example.net`;
  }

  function sender() {
    return { email: `app@${domain.domain}`, name: 'App' };
  }

  function v1(body: unknown): Promise<ApiResponse<V1SendResult>> {
    return request<V1SendResult>('POST', '/v1/email/send', {
      body,
      headers: { 'x-api-key': session.api.apiKey },
    });
  }

  function sendV2(body: Record<string, unknown>): Promise<ApiResponse<CreateMessageResult>> {
    return session.api.post<CreateMessageResult>(session.path('/messages'), body);
  }

  function sendConversation(
    body: Record<string, unknown>,
  ): Promise<ApiResponse<CreateMessageResult>> {
    return session.api.post<CreateMessageResult>(session.path('/messages/conversation'), body);
  }

  async function stored(to: string): Promise<MessageSummaryRecord[]> {
    const listed = await session.api.get<{ data: MessageSummaryRecord[] }>(
      session.path(`/messages?recipient=${encodeURIComponent(to)}`),
    );
    expect(listed.status).toBe(200);
    return listed.body.data;
  }

  async function message(id: string): Promise<MessageRecord> {
    const response = await session.api.get<MessageRecord>(
      session.path(`/messages/${encodeURIComponent(id)}`),
    );
    expect(response.status).toBe(200);
    return response.body;
  }

  /** The one message the sink received for `to`, once the platform says it was delivered. */
  async function delivered(to: string): Promise<StoredReceipt> {
    const [summary] = await pollUntil(
      () => stored(to),
      (found) => found[0]?.status === 'Delivered',
      { timeoutMs: 20_000, what: `the message to ${to} to be delivered` },
    );
    expect(summary?.status).toBe('Delivered');
    const receipts = receiptsFor(to);
    expect(receipts).toHaveLength(1);
    const [receipt] = receipts;
    if (!receipt) throw new Error(`no receipt for ${to}`);
    return receipt;
  }

  /** No line over 998 octets, and the DKIM signature (which covers Subject) still verifies. */
  async function expectWireSafe(receipt: StoredReceipt): Promise<void> {
    expect(overlongLines(receipt.raw)).toEqual([]);
    expect(await dkimResults(receipt.raw)).toEqual([[domain.domain, 'pass']]);
  }

  describe('no line over 998 octets (RFC 5322 2.1.1)', () => {
    const forwarded = `Subject: forwarded\r\nFrom: a@example.org\r\n\r\n${long('f', 998)}\r\n`;

    it('v2: long body lines, a long subject and long header values arrive folded or encoded', async () => {
      const to = recipient();
      const subject = long('S', 998);
      const headers = { 'X-Data': long('d', 1_500), 'X-Unicode': long('ü€', 1_500) };
      const text = long('t', 5_000);
      const html = `<p>${long('h', 5_000)}</p>`;
      const sent = await sendV2({
        from: sender(),
        recipients: [{ email: to }],
        subject,
        text_content: text,
        html_content: html,
        amp_content: `<html amp4email><body>${long('a', 5_000)}</body></html>`,
        headers,
        attachments: [
          { data: long('l', 3_000), content_type: 'text/plain', file_name: 'long.txt' },
          { data: forwarded, content_type: 'message/rfc822', file_name: 'fwd.eml' },
        ],
        tracking: { open: false, click: false },
      });
      expect(sent.status).toBe(202);

      const receipt = await delivered(to);
      await expectWireSafe(receipt);
      const mail = await simpleParser(receipt.raw);
      expect(mail.subject).toBe(subject);
      expect(withoutFinalNewline(mail.text)).toBe(text);
      expect(withoutFinalNewline(mail.html)).toBe(html);
      expect(
        // mailparser lists the AMP part (which has no file name) among the attachments.
        mail.attachments
          .filter((part) => part.filename)
          .map((part) => [part.filename, part.content.toString('utf8')]),
      ).toEqual([
        ['long.txt', long('l', 3_000)],
        ['fwd.eml', forwarded],
      ]);
      // What was sent is what is stored: its headers read back as given.
      const record = await message(sent.body.data[0]?.id ?? '');
      expect(record.content_parsed?.headers).toMatchObject({
        Subject: [subject],
        'X-Data': [headers['X-Data']],
        'X-Unicode': [headers['X-Unicode']],
      });
    });

    it('v2 with substitutions: a subject and HTML that render long', async () => {
      const to = recipient('tpl');
      const code = long('c', 2_000);
      const sent = await sendV2({
        from: sender(),
        recipients: [{ email: to, substitutions: { code } }],
        subject: 'Code {{ code }}',
        html_content: '<p>{{ code }}{{ code }}{{ code }}</p>',
        tracking: { open: false, click: false },
      });
      expect(sent.status).toBe(202);

      const receipt = await delivered(to);
      await expectWireSafe(receipt);
      const mail = await simpleParser(receipt.raw);
      expect(mail.subject).toBe(`Code ${code}`);
      expect(withoutFinalNewline(mail.html)).toBe(`<p>${code}${code}${code}</p>`);
    });

    it('v1: the legacy send goes through the same composer', async () => {
      const to = recipient('v1');
      const subject = long('V', 998);
      const html = `<p>${long('h', 5_000)}</p>`;
      const sent = await v1({
        from: sender(),
        recipients: [{ email: to }],
        content: { subject, html_body: html, headers: { 'X-Data': long('d', 1_500) } },
      });
      expect(sent.status).toBe(200);
      expect(sent.body.success_count).toBe(1);

      const receipt = await delivered(to);
      await expectWireSafe(receipt);
      const mail = await simpleParser(receipt.raw);
      expect(mail.subject).toBe(subject);
      expect(withoutFinalNewline(mail.html)).toBe(html);
    });

    it('conversation: the same for a message to several addresses', async () => {
      const to = recipient('conv');
      const cc = recipient('cc');
      const subject = long('C', 998);
      const sent = await sendConversation({
        from: sender(),
        to: [{ email: to }],
        cc: [{ email: cc }],
        subject,
        text_content: long('t', 5_000),
        headers: { 'X-Data': long('d', 1_500) },
      });
      expect(sent.status).toBe(202);

      const receipt = await delivered(to);
      expect(receipt.rcptTo).toEqual([to, cc]);
      await expectWireSafe(receipt);
      expect((await simpleParser(receipt.raw)).subject).toBe(subject);
    });

    it('refuses a message/rfc822 attachment with a longer line (it cannot be encoded) and stores nothing', async () => {
      const to = recipient('eml');
      const response = await sendV2({
        from: sender(),
        recipients: [{ email: to }],
        subject: 'Forwarded',
        text_content: 'See the attachment',
        attachments: [
          {
            data: `Subject: forwarded\r\n\r\n${long('f', 999)}\r\n`,
            content_type: 'message/rfc822',
            file_name: 'fwd.eml',
          },
        ],
      });
      expectError(
        response,
        400,
        'attachments[0] has a line longer than 998 octets, which a message/* attachment cannot carry (it is sent unencoded); send it as application/octet-stream instead',
      );
      expect(await stored(to)).toEqual([]);
    });
  });

  describe('composed by the delivery worker', () => {
    /** The message as composed, without the DKIM-Signature field the worker writes first. */
    const unsigned = (raw: string) =>
      raw.replace(/^DKIM-Signature:[^\r\n]*\r\n(?:[ \t][^\r\n]*\r\n)*/, '');

    it('delivers exactly the bytes GET returns: templated, tracked, with an attachment too large to travel inline', async () => {
      const to = [recipient('ann'), recipient('bob')];
      const sent = await sendV2({
        from: sender(),
        recipients: to.map((email, index) => ({ email, substitutions: { name: `R${index}` } })),
        subject: 'Hello {{ name }}',
        text_content: 'Hi {{ name }}',
        html_content: '<p>Hi {{ name }}, <a href="https://example.com/{{ name }}">go</a></p>',
        // About 530 kB in base64: the send's sources go to the worker through the bucket.
        attachments: [
          {
            file_name: 'data.bin',
            content_type: 'application/octet-stream',
            data: randomBytes(400_000).toString('base64'),
            base64: true,
          },
        ],
        tracking: { open: true, click: true },
      });
      expect(sent.status).toBe(202);

      for (const [index, email] of to.entries()) {
        const receipt = await delivered(email);
        await expectWireSafe(receipt);
        const [summary] = await stored(email);
        const record = await message(summary?.id ?? '');
        expect(unsigned(receipt.raw)).toBe(record.content);
        const mail = await simpleParser(receipt.raw);
        expect(mail.subject).toBe(`Hello R${index}`);
        expect(mail.html).toMatch(/\/t\/c\/[\w-]+/);
        expect(mail.attachments.map((attachment) => attachment.size)).toEqual([400_000]);
      }
    });
  });

  describe('trace and authentication headers cannot be forged (400, as the reliability plan item 13 rejects reserved headers)', () => {
    const FORGED = [
      ['Authentication-Results', 'mx.example.net; dkim=pass header.d=bank.example; spf=pass'],
      ['ARC-Seal', 'i=1; a=rsa-sha256; cv=none; d=bank.example; s=arc; b=AAAA'],
      ['ARC-Message-Signature', 'i=1; a=rsa-sha256; d=bank.example; s=arc; bh=AAAA; b=AAAA'],
      ['ARC-Authentication-Results', 'i=1; mx.example.net; dkim=pass header.d=bank.example'],
    ] as const;

    const refusal = (name: string) =>
      `header "${name}" cannot be given: only the mail servers that handle the message add trace and authentication headers`;

    /** A send through `api` with the given custom headers. */
    function sendWithHeaders(
      api: 'v2' | 'v1' | 'conversation',
      to: string,
      headers: Record<string, string>,
    ): Promise<ApiResponse> {
      const content = { from: sender(), subject: 'Forged' };
      switch (api) {
        case 'v2':
          return sendV2({ ...content, recipients: [{ email: to }], text_content: 'Hi', headers });
        case 'v1':
          return v1({
            from: content.from,
            recipients: [{ email: to }],
            content: { subject: content.subject, text_body: 'Hi', headers },
          });
        case 'conversation':
          return sendConversation({ ...content, to: [{ email: to }], text_content: 'Hi', headers });
      }
    }

    it.each(
      (['v2', 'v1', 'conversation'] as const).flatMap((api) =>
        FORGED.map(([name, value]) => [api, name, value] as const),
      ),
    )('%s refuses %s with 400 and stores nothing', async (api, name, value) => {
      const to = recipient('forged');
      const response = await sendWithHeaders(api, to, { [name]: value });
      // v1 errors are {"status"}, v2 errors {"message"} (spec 4.1).
      const body = api === 'v1' ? { status: refusal(name) } : { message: refusal(name) };
      expect({ status: response.status, body: response.body }).toEqual({ status: 400, body });
      expect(await stored(to)).toEqual([]);
    });

    it('delivers the same message without them, carrying no such header', async () => {
      const to = recipient('clean');
      const sent = await sendV2({
        from: sender(),
        recipients: [{ email: to }],
        subject: 'Clean',
        text_content: 'Nothing forged',
        headers: { 'X-Authentication-Note': 'a custom header that only looks alike' },
      });
      expect(sent.status).toBe(202);

      const receipt = await delivered(to);
      const header = receipt.raw.slice(0, receipt.raw.indexOf('\r\n\r\n'));
      expect(header).not.toMatch(/^(authentication-results|arc-[a-z-]+):/im);
      expect(header).toMatch(/^X-Authentication-Note: a custom header that only looks alike\r?$/m);
      await expectWireSafe(receipt);
    });
  });
});
