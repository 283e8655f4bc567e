import { randomUUID } from 'node:crypto';

import type { ApiKeyRecord } from '@envoi/contracts-accounts';
import type { DomainRecord } from '@envoi/contracts-domains';
import type { MessageSummaryRecord, V1SendResult } from '@envoi/contracts-messages';
import type { SuppressionRecord } from '@envoi/contracts-suppressions';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { type ApiResponse, request } from '../support/api-client';
import { createVerifiedDomain } from '../support/domains';
import { expectError } from '../support/expect-error';

/** The gateway's cap on JSON nesting (objects and arrays). */
const MAX_DEPTH = 64;

/** JSON text escapes, written out so that the body carries them as the client sent them. */
const NUL = '\\u0000';
const LONE_HIGH = '\\ud800';
const LONE_LOW = '\\udc00';
const EXPIRES = '"expires_at":"2031-06-01T14:00:00Z"';
const BAD_STRINGS: Record<string, string> = {
  'an escaped NUL': `a${NUL}b`,
  'a lone high surrogate': `a${LONE_HIGH}b`,
  'a lone low surrogate': `a${LONE_LOW}b`,
  'a reversed surrogate pair': `${LONE_LOW}${LONE_HIGH}`,
};

function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

function unique(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

function expectV1Error(response: ApiResponse, status: number, message?: string): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: { status: message ?? (expect.any(String) as unknown) },
  });
}

/**
 * Issue 11: JSON that PostgreSQL cannot store (NUL, unpaired surrogates), that nests without
 * bound or that repeats a key is refused at the edge with 400 and the contract's error body,
 * before anything runs, on v2 and v1; so are such query strings and path parameters.
 * Nesting is capped at 64 levels as the lead decided (the reliability plan's item 11 says 32).
 */
describe('strict JSON and text at the edge (issue 11)', () => {
  let session: AccountSession;
  let domain: DomainRecord;

  beforeAll(async () => {
    session = await createAccountSession();
    domain = await createVerifiedDomain(session);
  });

  afterAll(async () => {
    await closeSessions();
  });

  function postRaw(path: string, rawBody: string | Buffer, headers?: Record<string, string>) {
    return session.api.send('POST', session.path(path), { rawBody, headers });
  }

  async function keyLabels(): Promise<string[]> {
    const listed = await session.api.get<{ data: ApiKeyRecord[] }>(session.path('/api-keys'));
    expect(listed.status).toBe(200);
    return listed.body.data.map((key) => key.label);
  }

  async function messagesTo(recipient: string): Promise<MessageSummaryRecord[]> {
    const listed = await session.api.get<{ data: MessageSummaryRecord[] }>(
      session.path(`/messages?recipient=${encodeURIComponent(recipient)}`),
    );
    expect(listed.status).toBe(200);
    return listed.body.data;
  }

  async function suppressionsOf(email: string): Promise<SuppressionRecord[]> {
    const listed = await session.api.get<{ data: SuppressionRecord[] }>(
      session.path(`/suppressions?email=${encodeURIComponent(email)}`),
    );
    expect(listed.status).toBe(200);
    return listed.body.data;
  }

  function messageJson(recipient: string, fields: string[] = []): string {
    return `{"from":{"email":"app@${domain.domain}","name":"App"},"recipients":[{"email":"${recipient}"}],"text_content":"Hi",${['"subject":"Hello"', ...fields].join(',')}}`;
  }

  function v1Json(recipient: string, content = '"subject":"Legacy","text_body":"Hi"'): string {
    return `{"from":{"email":"app@${domain.domain}"},"recipients":[{"email":"${recipient}"}],"content":{${content}}}`;
  }

  function sendV1(rawBody: string | Buffer) {
    return request<V1SendResult>('POST', '/v1/email/send', {
      rawBody,
      headers: { 'x-api-key': session.api.apiKey },
    });
  }

  describe('NUL and unpaired surrogates in JSON strings', () => {
    it.each(Object.entries(BAD_STRINGS))(
      'refuses %s in an API key label, a scope or a key name, and creates no key',
      async (_name, bad) => {
        const label = unique('bad');
        for (const rawBody of [
          `{"label":"${label}${bad}","scopes":["accounts:read"]}`,
          `{"label":"${label}","scopes":["accounts:read","${bad}"]}`,
          `{"label":"${label}","scopes":["accounts:read"],"${bad}":1}`,
        ]) {
          expectError(await postRaw('/api-keys', rawBody), 400);
        }
        expect((await keyLabels()).filter((stored) => stored.startsWith(label))).toEqual([]);
      },
    );

    it('names the problem in the message', async () => {
      expectError(
        await postRaw('/api-keys', `{"label":"${NUL}","scopes":["accounts:read"]}`),
        400,
        'strings must not contain NUL characters',
      );
      expectError(
        await postRaw('/api-keys', `{"label":"${LONE_HIGH}","scopes":["accounts:read"]}`),
        400,
        'strings must not contain unpaired UTF-16 surrogates',
      );
    });

    it.each(Object.entries(BAD_STRINGS))(
      'refuses %s in the account update and leaves the account unchanged',
      async (_name, bad) => {
        const before = await session.api.get<Record<string, unknown>>(session.path());
        for (const rawBody of [`{"about":"${bad}"}`, `{"name":"${bad}","about":"changed"}`]) {
          expectError(await session.api.send('PUT', session.path(), { rawBody }), 400);
        }
        const after = await session.api.get<Record<string, unknown>>(session.path());
        expect(after.body).toEqual(before.body);
      },
    );

    it.each(Object.entries(BAD_STRINGS))(
      'refuses %s anywhere in a message and queues nothing',
      async (_name, bad) => {
        const recipient = `${unique('nul')}@example.net`;
        for (const field of [
          `"reply_to":{"email":"r@example.net","name":"${bad}"}`,
          `"html_content":"<p>${bad}</p>"`,
          `"tags":["ok","${bad}"]`,
          `"substitutions":{"name":"${bad}"}`,
          `"substitutions":{"${bad}":"x"}`,
          `"headers":{"X-Custom":"${bad}"}`,
        ]) {
          expectError(await postRaw('/messages', messageJson(recipient, [field])), 400);
        }
        expectError(
          await postRaw('/messages', messageJson(recipient).replace('"Hello"', `"${bad}"`)),
          400,
        );
        expect(await messagesTo(recipient)).toEqual([]);
      },
    );

    it('still accepts escaped surrogate pairs and other escapes', async () => {
      const recipient = `${unique('pair')}@example.net`;
      const response = await postRaw(
        '/messages',
        messageJson(recipient).replace('"Hello"', '"Hello \\ud83d\\ude00 \\u00e9\\t\\"x\\""'),
      );
      expect(response.status).toBe(202);
      const [stored] = await messagesTo(recipient);
      expect(stored?.subject).toBe('Hello 😀 é\t"x"');
    });

    it.each(Object.entries(BAD_STRINGS))(
      'refuses %s in a suppression and stores nothing',
      async (_name, bad) => {
        const email = `${unique('s')}@example.test`;
        for (const rawBody of [
          `{"email":"${email}",${EXPIRES},"reason":"${bad}"}`,
          `{"email":"${email}${bad}",${EXPIRES}}`,
          `{"email":"${email}",${EXPIRES},"${bad}":"x"}`,
        ]) {
          expectError(await postRaw('/suppressions', rawBody), 400);
        }
        expect(await suppressionsOf(email)).toEqual([]);
      },
    );

    it.each(Object.entries(BAD_STRINGS))(
      'refuses %s in a v1 send with a {status} body and queues nothing',
      async (_name, bad) => {
        const recipient = `${unique('v1')}@example.net`;
        for (const rawBody of [
          v1Json(recipient, `"subject":"${bad}","text_body":"Hi"`),
          v1Json(recipient, `"subject":"Legacy","text_body":"Hi","headers":{"X-A":"${bad}"}`),
          v1Json(recipient).replace(
            `"email":"${recipient}"`,
            `"email":"${recipient}","name":"${bad}"`,
          ),
        ]) {
          expectV1Error(await sendV1(rawBody), 400);
        }
        expect(await messagesTo(recipient)).toEqual([]);
      },
    );
  });

  describe('bytes that are not UTF-8', () => {
    const notUtf8 = (text: string) => {
      const [before, after] = text.split('@@');
      return Buffer.concat([
        Buffer.from(before ?? ''),
        Buffer.from([0xc3, 0x28]),
        Buffer.from(after ?? ''),
      ]);
    };

    it('refuses them on v2 and stores nothing', async () => {
      const label = unique('utf8');
      expectError(
        await postRaw('/api-keys', notUtf8(`{"label":"${label}@@","scopes":["accounts:read"]}`)),
        400,
        'request body is not valid UTF-8',
      );
      expect((await keyLabels()).filter((stored) => stored.startsWith(label))).toEqual([]);
    });

    it('refuses them on v1', async () => {
      const recipient = `${unique('v1utf8')}@example.net`;
      expectV1Error(
        await sendV1(notUtf8(v1Json(recipient, '"subject":"@@","text_body":"Hi"'))),
        400,
        'request body is not valid UTF-8',
      );
      expect(await messagesTo(recipient)).toEqual([]);
    });
  });

  describe('nesting depth', () => {
    const tooDeep = `JSON nesting is deeper than ${MAX_DEPTH} levels`;

    it(`accepts ${MAX_DEPTH} levels (an ignored field) and refuses ${MAX_DEPTH + 1}`, async () => {
      const accepted = unique('deep');
      const created = await postRaw(
        '/api-keys',
        `{"label":"${accepted}","scopes":["accounts:read"],"extra":${nested(MAX_DEPTH - 1)}}`,
      );
      expect(created.status).toBe(201);

      const refused = unique('deeper');
      expectError(
        await postRaw(
          '/api-keys',
          `{"label":"${refused}","scopes":["accounts:read"],"extra":${nested(MAX_DEPTH)}}`,
        ),
        400,
        tooDeep,
      );
      const labels = await keyLabels();
      expect(labels).toContain(accepted);
      expect(labels).not.toContain(refused);
    });

    it('refuses 10 000 levels on v2 (message substitutions) and v1 with 400', async () => {
      const recipient = `${unique('deep')}@example.net`;
      const deep = nested(10_000);
      expectError(
        await postRaw('/messages', messageJson(recipient, [`"substitutions":{"x":${deep}}`])),
        400,
        tooDeep,
      );
      expectError(await postRaw('/api-keys', deep), 400, tooDeep);
      expectError(
        await postRaw('/suppressions', `{"email":${'{"a":'.repeat(10_000)}`),
        400,
        tooDeep,
      );
      expectV1Error(
        await sendV1(v1Json(recipient, `"subject":"S","text_body":"Hi","headers":${deep}`)),
        400,
        tooDeep,
      );
      expect(await messagesTo(recipient)).toEqual([]);
    });
  });

  describe('duplicate keys', () => {
    it('refuses a repeated key at the top level, escaped or not, and creates no key', async () => {
      const label = unique('dup');
      for (const rawBody of [
        `{"label":"${label}-a","scopes":["accounts:read"],"label":"${label}-b"}`,
        `{"label":"${label}-a","scopes":["accounts:read"],"\\u006cabel":"${label}-b"}`,
      ]) {
        expectError(
          await postRaw('/api-keys', rawBody),
          400,
          'duplicate key "label" in JSON object',
        );
      }
      expect((await keyLabels()).filter((stored) => stored.startsWith(label))).toEqual([]);
    });

    it('refuses a repeated key deep in a message and queues nothing', async () => {
      const recipient = `${unique('dup')}@example.net`;
      const body = messageJson(recipient).replace(
        `{"email":"${recipient}"}`,
        `{"email":"${recipient}","name":"A","name":"B"}`,
      );
      expectError(await postRaw('/messages', body), 400, 'duplicate key "name" in JSON object');
      expect(await messagesTo(recipient)).toEqual([]);
    });

    it('refuses a repeated key in a suppression and in a v1 send', async () => {
      const email = `${unique('s')}@example.test`;
      expectError(
        await postRaw(
          '/suppressions',
          `{"email":"other@example.test",${EXPIRES},"email":"${email}"}`,
        ),
        400,
      );
      expect(await suppressionsOf(email)).toEqual([]);

      const recipient = `${unique('v1dup')}@example.net`;
      expectV1Error(
        await sendV1(v1Json(recipient, '"subject":"A","text_body":"Hi","subject":"B"')),
        400,
        'duplicate key "subject" in JSON object',
      );
      expect(await messagesTo(recipient)).toEqual([]);
    });

    it('does not take the idempotency key: the corrected request executes', async () => {
      const recipient = `${unique('idem')}@example.net`;
      const headers = { 'idempotency-key': randomUUID() };
      const refused = await postRaw(
        '/messages',
        messageJson(recipient, ['"subject":"Again"']),
        headers,
      );
      expectError(refused, 400, 'duplicate key "subject" in JSON object');
      const accepted = await postRaw('/messages', messageJson(recipient), headers);
      expect(accepted.status).toBe(202);
      expect(await messagesTo(recipient)).toHaveLength(1);
    });
  });

  describe('query strings and path parameters', () => {
    it('refuses a NUL in a query value or name with 400', async () => {
      for (const query of ['email=a%00b%40example.test', 'em%00ail=a%40example.test']) {
        expectError(
          await session.api.get(session.path(`/suppressions?${query}`)),
          400,
          'query parameters must not contain NUL characters',
        );
      }
      expectError(await session.api.get(session.path('/messages?recipient=%00')), 400);
    });

    it('refuses invalid percent-encoding and encoded bytes that are not UTF-8', async () => {
      for (const query of ['email=%ZZ', 'email=%', 'email=%C3', 'email=%ED%A0%80', 'email=%FF']) {
        expectError(
          await session.api.get(session.path(`/suppressions?${query}`)),
          400,
          'query string is not valid percent-encoded UTF-8',
        );
      }
    });

    it('refuses a NUL in a path parameter with 400, before any change', async () => {
      expectError(
        await session.api.get(session.path('/domains/ex%00ample.com')),
        400,
        'path parameters must not contain NUL characters',
      );
      expectError(
        await session.api.delete(session.path(`/domains/${domain.domain}%00`)),
        400,
        'path parameters must not contain NUL characters',
      );
      expect((await session.api.get(session.path(`/domains/${domain.domain}`))).status).toBe(200);
    });

    it('still accepts well-encoded queries', async () => {
      const email = `${unique('q')}+tag@example.test`;
      const listed = await session.api.get<{ data: SuppressionRecord[] }>(
        session.path(`/suppressions?email=${encodeURIComponent(email)}&limit=5`),
      );
      expect(listed.status).toBe(200);
      expect(listed.body.data).toEqual([]);
    });
  });
});
