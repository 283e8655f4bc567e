import { randomUUID } from 'node:crypto';

import type { DomainRecord } from '@envoi/contracts-domains';
import type {
  CreateMessageResult,
  MessageRecord,
  MessageSummaryRecord,
  V1SendResult,
} from '@envoi/contracts-messages';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import { request } from '../support/api-client';
import { createVerifiedDomain, uniqueDomain } from '../support/domains';
import { expectError } from '../support/expect-error';

const MESSAGE_ID = /^<[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}@(.+)>$/;

function inDays(days: number): string {
  return new Date(Date.now() + days * 24 * 60 * 60 * 1000).toISOString();
}

describe('sending messages (issue 5)', () => {
  let session: AccountSession;
  let domain: DomainRecord;

  beforeAll(async () => {
    session = await createAccountSession();
    domain = await createVerifiedDomain(session);
  });

  afterAll(async () => {
    await closeSessions();
  });

  function sender(local = 'app') {
    return { email: `${local}@${domain.domain}`, name: 'Envoi App' };
  }

  function message(overrides: Record<string, unknown> = {}) {
    return {
      from: sender(),
      recipients: [{ email: `r-${randomUUID().slice(0, 8)}@example.net` }],
      subject: 'Hello',
      text_content: 'Hello there',
      ...overrides,
    };
  }

  async function send(body: Record<string, unknown>) {
    return session.api.post<CreateMessageResult>(session.path('/messages'), body);
  }

  async function getMessage(id: string) {
    return session.api.get<MessageRecord>(session.path(`/messages/${encodeURIComponent(id)}`));
  }

  describe('createMessage (spec 2.1, 2.2)', () => {
    it('accepts one message per recipient with <uuid@domain> ids', async () => {
      const response = await send(
        message({
          recipients: [{ email: 'one@example.net', name: 'One' }, { email: 'two@example.net' }],
        }),
      );

      expect(response.status).toBe(202);
      expect(response.body.object).toBe('list');
      expect(response.body.data).toHaveLength(2);
      const [first, second] = response.body.data;
      expect(first).toMatchObject({
        object: 'message',
        status: 'queued',
        error: null,
        recipient: { email: 'one@example.net', name: 'One' },
      });
      expect(second?.recipient).toEqual({ email: 'two@example.net', name: '' });
      expect(first?.id).toMatch(MESSAGE_ID);
      expect(MESSAGE_ID.exec(first?.id ?? '')?.[1]).toBe(domain.domain);
      expect(first?.id).not.toBe(second?.id);
      expect(first?.schedule).toBeUndefined();
    });

    it('accepts 100 recipients and refuses 101', async () => {
      const recipients = Array.from({ length: 100 }, (_, index) => ({
        email: `bulk-${index}@example.net`,
      }));
      const accepted = await send(message({ recipients }));
      expect(accepted.status).toBe(202);
      expect(accepted.body.data).toHaveLength(100);
      expect(new Set(accepted.body.data.map((entry) => entry.id)).size).toBe(100);

      expectError(
        await send(message({ recipients: [...recipients, { email: 'extra@example.net' }] })),
        400,
      );
      expectError(await send(message({ recipients: [] })), 400);
    });

    it('stores the message with a To header holding only its recipient', async () => {
      const response = await send(
        message({ recipients: [{ email: 'a@example.net' }, { email: 'b@example.net' }] }),
      );
      const fetched = await getMessage(response.body.data[0]?.id ?? '');
      expect(fetched.status).toBe(200);
      expect(fetched.body.recipient).toBe('a@example.net');
      expect(fetched.body.sender).toBe(sender().email);
      expect(fetched.body.domain_id).toBe(domain.id);
      const to = fetched.body.content_parsed?.headers['To'] ?? [];
      expect(to.join(',')).toContain('a@example.net');
      expect(to.join(',')).not.toContain('b@example.net');
    });

    it.each([
      ['neither text nor html (rule 1)', { text_content: undefined }],
      ['empty text and html (rule 1)', { text_content: '', html_content: '' }],
      ['retention.metadata 0 (rule 3)', { retention: { metadata: 0 } }],
      ['retention.data 31 (rule 3)', { retention: { data: 31 } }],
      [
        'reply_to with a reply-to header (rule 4)',
        { reply_to: { email: 'r@example.net' }, headers: { 'Reply-To': 'x@example.net' } },
      ],
      ['first_attempt in the past (rule 6)', { schedule: { first_attempt: inDays(-0.01) } }],
      ['first_attempt beyond 7 days (rule 6)', { schedule: { first_attempt: inDays(7.1) } }],
      ['expires beyond 8 days (rule 6)', { schedule: { expires: inDays(8.1) } }],
      ['expires in the past (rule 6)', { schedule: { expires: inDays(-0.01) } }],
      ['a CR/LF in a header value', { headers: { 'X-Custom': 'a\r\nBcc: victim@example.net' } }],
      ['a CR/LF in the subject', { subject: 'Hi\r\nBcc: victim@example.net' }],
      ['a bad sandbox_result', { sandbox_result: 'explode' }],
      ['a recipient without email', { recipients: [{ name: 'nobody' }] }],
    ])('rejects %s with 400', async (_name, overrides) => {
      expectError(await send(message(overrides)), 400);
    });

    it('rejects a sender domain the account does not own or has not verified (rule 2)', async () => {
      expectError(await send(message({ from: { email: 'me@not-mine.example.org' } })), 400);

      const unverified = uniqueDomain();
      await session.api.post(session.path('/domains'), { domain: unverified });
      expectError(await send(message({ from: { email: `me@${unverified}` } })), 400);
    });

    it('authorises by the from domain (rule 8)', async () => {
      const scoped = await createKey(session, [`messages:send:{${domain.domain}}`]);
      const accepted = await scoped.client.post(session.path('/messages'), message());
      expect(accepted.status).toBe(202);

      const other = await createVerifiedDomain(session);
      expectError(
        await scoped.client.post(
          session.path('/messages'),
          message({ from: { email: `x@${other.domain}` } }),
        ),
        403,
      );
      const reader = await createKey(session, ['messages:read:all']);
      expectError(await reader.client.post(session.path('/messages'), message()), 403);
    });

    it('ignores a message-id header and generates the id (rule 5)', async () => {
      const response = await send(message({ headers: { 'Message-ID': '<forged@evil.test>' } }));
      expect(response.status).toBe(202);
      const id = response.body.data[0]?.id ?? '';
      const fetched = await getMessage(id);
      expect(fetched.body.message_id).toBe(id);
      expect(fetched.body.content).not.toContain('forged@evil.test');
      expect(fetched.body.content_parsed?.headers['Message-ID']).toEqual([id]);
    });

    it('keeps custom headers with their case', async () => {
      const response = await send(message({ headers: { 'X-Campaign-ID': 'spring-42' } }));
      const fetched = await getMessage(response.body.data[0]?.id ?? '');
      expect(fetched.body.content).toContain('X-Campaign-ID: spring-42');
    });

    it('renders templates per recipient, recipient substitutions overriding global ones', async () => {
      const response = await send(
        message({
          subject: 'Hi {{ name }}',
          text_content: 'Plan: {{ plan }}{% if vip %} (VIP){% endif %}',
          html_content: '<p>{{ name }}</p>',
          substitutions: { plan: 'basic', name: 'Friend', vip: false },
          recipients: [
            { email: 'ann@example.net', substitutions: { name: 'Ann', vip: true } },
            { email: 'bob@example.net', substitutions: { name: '<b>Bob</b>' } },
          ],
        }),
      );
      expect(response.status).toBe(202);
      const ann = await getMessage(response.body.data[0]?.id ?? '');
      const bob = await getMessage(response.body.data[1]?.id ?? '');
      expect(ann.body.subject).toBe('Hi Ann');
      const annText = ann.body.content_parsed?.parts.find((part) =>
        part.content_type.startsWith('text/plain'),
      );
      expect(annText?.content).toContain('Plan: basic (VIP)');
      const bobHtml = bob.body.content_parsed?.parts.find((part) =>
        part.content_type.startsWith('text/html'),
      );
      expect(bobHtml?.content).toContain('&lt;b&gt;Bob&lt;');
      expect(bobHtml?.content).not.toContain('<b>Bob');
    });

    it('answers 400 naming the field for a template error', async () => {
      const response = await send(
        message({ text_content: 'Hello {% if %}', substitutions: { a: 1 } }),
      );
      expectError(response, 400);
      expect((response.body as unknown as { message: string }).message).toMatch(/text_content/);
    });

    it('sends inline images as related parts and other files as attachments', async () => {
      const pixel = Buffer.from('R0lGODlhAQABAAAAACw=', 'base64').toString('base64');
      const response = await send(
        message({
          html_content: '<img src="cid:logo@envoi">',
          attachments: [
            {
              data: pixel,
              base64: true,
              content_type: 'image/gif',
              file_name: 'logo.gif',
              content_id: '<logo@envoi>',
            },
            { data: 'a,b\n1,2\n', content_type: 'text/csv', file_name: 'report.csv' },
          ],
        }),
      );
      expect(response.status).toBe(202);
      const fetched = await getMessage(response.body.data[0]?.id ?? '');
      const raw = fetched.body.content ?? '';
      expect(raw).toMatch(/multipart\/related/);
      expect(raw).toMatch(/Content-ID: <logo@envoi>/i);
      const attachments = fetched.body.content_parsed?.attachments ?? [];
      const csv = attachments.find((attachment) => attachment.filename === 'report.csv');
      expect(Buffer.from(csv?.content ?? '', 'base64').toString('utf8')).toBe('a,b\n1,2\n');
    });

    it('takes a body of several megabytes', async () => {
      const big = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64');
      const response = await send(
        message({
          attachments: [
            {
              data: big,
              base64: true,
              content_type: 'application/octet-stream',
              file_name: 'b.bin',
            },
          ],
        }),
      );
      expect(response.status).toBe(202);
      const fetched = await getMessage(response.body.data[0]?.id ?? '');
      const attachment = fetched.body.content_parsed?.attachments[0];
      expect(Buffer.from(attachment?.content ?? '', 'base64').length).toBe(3 * 1024 * 1024);
    });

    it('gives a suppressed recipient status error without failing the others', async () => {
      const suppressed = `blocked-${randomUUID().slice(0, 8)}@example.net`;
      const created = await session.api.post(session.path('/suppressions'), {
        email: suppressed,
        expires_at: inDays(30),
        reason: 'test',
      });
      expect(created.status).toBe(201);

      const response = await send(
        message({ recipients: [{ email: suppressed }, { email: 'fine@example.net' }] }),
      );
      expect(response.status).toBe(202);
      const [blocked, fine] = response.body.data;
      expect(blocked).toMatchObject({ status: 'error', id: null });
      expect(blocked?.error).toEqual(expect.any(String));
      expect(fine).toMatchObject({ status: 'queued', error: null });
    });

    it('replays an idempotent send without sending again', async () => {
      const key = randomUUID();
      const body = message();
      const first = await session.api.post(session.path('/messages'), body, {
        headers: { 'idempotency-key': key },
      });
      const second = await session.api.post(session.path('/messages'), body, {
        headers: { 'idempotency-key': key },
      });
      expect(first.status).toBe(202);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.text).toBe(first.text);
    });
  });

  describe('schedule and cancel (spec 3.2, 4.2 rule 9)', () => {
    it('schedules, cancels once, and refuses to cancel again or a queued message', async () => {
      const schedule = { first_attempt: inDays(1), expires: inDays(2) };
      const response = await send(message({ schedule }));
      expect(response.status).toBe(202);
      const scheduled = response.body.data[0];
      expect(scheduled?.status).toBe('scheduled');
      expect(scheduled?.schedule).toEqual(schedule);

      const id = scheduled?.id ?? '';
      const cancelled = await session.api.delete(
        session.path(`/messages/${encodeURIComponent(id)}/cancel`),
      );
      expect(cancelled.status).toBe(200);
      expect(Object.keys(cancelled.body as object)).toEqual(['message']);
      expect((await getMessage(id)).body.status).toBe('Cancelled');

      expectError(
        await session.api.delete(session.path(`/messages/${encodeURIComponent(id)}/cancel`)),
        400,
      );
      const queued = await send(message());
      const bareUuid = MESSAGE_ID.exec(queued.body.data[0]?.id ?? '')?.[0].slice(1, 37) ?? '';
      expectError(await session.api.delete(session.path(`/messages/${bareUuid}/cancel`)), 400);
      expectError(await session.api.delete(session.path(`/messages/${randomUUID()}/cancel`)), 404);
    });

    it('requires the cancel scope of the sender domain', async () => {
      const response = await send(message({ schedule: { first_attempt: inDays(1) } }));
      const id = encodeURIComponent(response.body.data[0]?.id ?? '');
      const other = await createVerifiedDomain(session);
      const wrong = await createKey(session, [`messages:cancel:{${other.domain}}`]);
      expectError(await wrong.client.delete(session.path(`/messages/${id}/cancel`)), 404);
      const right = await createKey(session, [`messages:cancel:{${domain.domain}}`]);
      expect((await right.client.delete(session.path(`/messages/${id}/cancel`))).status).toBe(200);
    });
  });

  describe('reading messages', () => {
    it('gets a message by <uuid@domain> and by the bare uuid', async () => {
      const response = await send(message());
      const id = response.body.data[0]?.id ?? '';
      const byFullId = await getMessage(id);
      const byUuid = await getMessage(id.slice(1, 37));
      expect(byFullId.status).toBe(200);
      expect(byUuid.status).toBe(200);
      expect(byUuid.body.id).toBe(byFullId.body.id);
      expect(['Received', 'Delivered']).toContain(byFullId.body.status);
      expect(byFullId.body.content).toContain('Hello there');
      expectError(await getMessage(randomUUID()), 404);
      expectError(await getMessage('not-an-id'), 400);
    });

    it('lists with filters and keeps domain-scoped keys to their domains', async () => {
      const tag = `t${randomUUID().slice(0, 8)}`;
      const recipient = `listed-${randomUUID().slice(0, 8)}@example.net`;
      await send(message({ tags: [tag], recipients: [{ email: recipient }] }));
      const other = await createVerifiedDomain(session);
      await send(message({ from: { email: `x@${other.domain}` }, tags: [tag] }));

      const all = await session.api.get<{ data: MessageSummaryRecord[] }>(
        session.path(`/messages?tags=${tag}`),
      );
      expect(all.status).toBe(200);
      expect(all.body.data).toHaveLength(2);
      const byRecipient = await session.api.get<{ data: MessageSummaryRecord[] }>(
        session.path(`/messages?recipient=${encodeURIComponent(recipient)}`),
      );
      expect(byRecipient.body.data.map((entry) => entry.recipient)).toEqual([recipient]);
      const byStatus = await session.api.get<{ data: MessageSummaryRecord[] }>(
        session.path(`/messages?tags=${tag}&status=received,Delivered`),
      );
      expect(byStatus.body.data).toHaveLength(2);
      expectError(await session.api.get(session.path('/messages?status=Exploded')), 400);
      expectError(await session.api.get(session.path('/messages?from_time=yesterday')), 400);

      const scoped = await createKey(session, [`messages:read:{${domain.domain}}`]);
      const mine = await scoped.client.get<{ data: MessageSummaryRecord[] }>(
        session.path(`/messages?tags=${tag}`),
      );
      expect(mine.body.data.map((entry) => entry.sender)).toEqual([sender().email]);
      expectError(
        await scoped.client.get(
          session.path(`/messages?sender=${encodeURIComponent(`x@${other.domain}`)}`),
        ),
        403,
      );
    });
  });

  describe('conversation messages', () => {
    it('sends one message to to, cc and bcc together', async () => {
      const response = await session.api.post<CreateMessageResult>(
        session.path('/messages/conversation'),
        {
          from: sender(),
          to: [{ email: 'to1@example.net' }, { email: 'to2@example.net' }],
          cc: [{ email: 'cc@example.net' }],
          bcc: [{ email: 'hidden@example.net' }],
          subject: 'Thread',
          text_content: 'Hi all',
        },
      );
      expect(response.status).toBe(202);
      const id = response.body.data[0]?.id ?? '';
      const fetched = await getMessage(id);
      expect(fetched.body.content).toMatch(/To: .*to1@example\.net.*to2@example\.net/s);
      expect(fetched.body.content).toContain('cc@example.net');
      expect(fetched.body.content).not.toContain('hidden@example.net');
    });
  });

  describe('legacy v1 send (spec 4.1)', () => {
    function v1Body(overrides: Record<string, unknown> = {}) {
      return {
        from: sender(),
        recipients: [{ email: 'v1@example.net', name: 'V One' }],
        content: { subject: 'Legacy', text_body: 'From v1', html_body: '<p>From v1</p>' },
        ...overrides,
      };
    }

    function v1(body: unknown, key = session.api.apiKey) {
      return request<V1SendResult>('POST', '/v1/email/send', {
        body,
        headers: { 'x-api-key': key },
      });
    }

    it('answers 200 with the counts', async () => {
      const response = await v1(v1Body());
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        success_count: 1,
        fail_count: 0,
        failed_recipients: [],
        errors: [],
      });
    });

    it('stores the same message as the equivalent v2 send (spec 9 migration)', async () => {
      const tag = randomUUID().slice(0, 8);
      const v1Recipient = `v1-${tag}@example.net`;
      const v2Recipient = `v2-${tag}@example.net`;
      const attachment = { data: 'hello', content_type: 'text/plain', file_name: 'a.txt' };
      const legacy = await v1(
        v1Body({
          recipients: [{ email: v1Recipient }],
          content: {
            subject: 'Parity',
            text_body: 'Same text',
            html_body: '<p>Same html</p>',
            attachments: [attachment],
            headers: { 'X-Parity': tag },
            reply_to: { email: 'reply@example.net' },
          },
        }),
      );
      expect(legacy.status).toBe(200);
      const modern = await send({
        from: sender(),
        recipients: [{ email: v2Recipient }],
        subject: 'Parity',
        text_content: 'Same text',
        html_content: '<p>Same html</p>',
        attachments: [attachment],
        headers: { 'X-Parity': tag },
        reply_to: { email: 'reply@example.net' },
      });
      expect(modern.status).toBe(202);

      const find = async (recipient: string) => {
        const listed = await session.api.get<{ data: MessageSummaryRecord[] }>(
          session.path(`/messages?recipient=${encodeURIComponent(recipient)}`),
        );
        const id = listed.body.data[0]?.message_id ?? '';
        return (await getMessage(id)).body;
      };
      const [fromV1, fromV2] = [await find(v1Recipient), await find(v2Recipient)];
      const shape = (message: MessageRecord) => ({
        subject: message.subject,
        sender: message.sender,
        parts: message.content_parsed?.parts.map((part) => part.content.trim()),
        attachments: message.content_parsed?.attachments.map((file) => [
          file.filename,
          file.content,
        ]),
        parity: message.content_parsed?.headers['X-Parity'],
        replyTo: message.content_parsed?.headers['Reply-To'],
      });
      expect(shape(fromV1)).toEqual(shape(fromV2));
    });

    it('answers {"status"} errors: 403 for bad credentials, 400 for bad input', async () => {
      const badKey = await v1(v1Body(), `envoi-sk-${'y'.repeat(64)}`);
      expect(badKey.status).toBe(403);
      expect(badKey.body).toEqual({ status: 'invalid credentials' });

      const invalid = await v1(v1Body({ recipients: [] }));
      expect(invalid.status).toBe(400);
      expect(Object.keys(invalid.body as object)).toEqual(['status']);

      const foreign = await v1(v1Body({ from: { email: 'me@not-mine.example.org' } }));
      expect(foreign.status).toBe(400);
      expect(Object.keys(foreign.body as object)).toEqual(['status']);
    });
  });
});
