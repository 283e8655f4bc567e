import { validatePayload } from '@envoi/contracts-core';

import { CreateConversationBody, CreateMessageBody, CreateMessageRequest } from './requests';
import { V1SendBody } from './v1';

/** A plain copy of a validated body, as the bus carries it (absent fields left out). */
function sent<T extends object>(cls: new () => T, plain: unknown): unknown {
  const result = validatePayload(cls, plain);
  if (!result.ok) throw new Error(result.message);
  return JSON.parse(JSON.stringify(result.value));
}

const FROM = { email: 'sender@example.com', name: '' };
const ATTACHMENT = { data: 'hi', content_type: 'text/plain', file_name: 'a.txt' };

describe('send bodies as Go clients serialise them (every field, unset ones empty or null)', () => {
  it('reads the empty and null optional fields of a message as absent', () => {
    expect(
      sent(CreateMessageBody, {
        from: FROM,
        recipients: [{ email: 'to@example.net', name: '', substitutions: null }],
        reply_to: null,
        subject: 'Hello',
        text_content: 'Hi',
        html_content: '',
        amp_content: '',
        attachments: [
          { ...ATTACHMENT, base64: false, content_disposition: '', content_id: '' },
          { ...ATTACHMENT, base64: null, content_disposition: null, content_id: null },
        ],
        headers: null,
        substitutions: null,
        tags: null,
        sandbox: null,
        sandbox_result: '',
        tracking: null,
        retention: null,
        schedule: { first_attempt: '', expires: null },
      }),
    ).toEqual({
      from: { email: 'sender@example.com' },
      recipients: [{ email: 'to@example.net' }],
      subject: 'Hello',
      text_content: 'Hi',
      attachments: [{ ...ATTACHMENT, base64: false }, ATTACHMENT],
      schedule: {},
    });
  });

  it('does the same for a conversation and a v1 send', () => {
    expect(
      sent(CreateConversationBody, {
        from: FROM,
        to: [{ email: 'to@example.net' }],
        cc: null,
        bcc: null,
        subject: 'Hello',
        html_content: '<p>Hi</p>',
        text_content: '',
      }),
    ).toEqual({
      from: { email: 'sender@example.com' },
      to: [{ email: 'to@example.net' }],
      subject: 'Hello',
      html_content: '<p>Hi</p>',
    });
    expect(
      sent(V1SendBody, {
        from: FROM,
        recipients: [{ email: 'to@example.net', name: '' }],
        content: {
          subject: 'Hello',
          text_body: 'Hi',
          html_body: '',
          attachments: [{ ...ATTACHMENT, base64: null, content_id: '' }],
          headers: null,
          reply_to: null,
        },
      }),
    ).toEqual({
      from: { email: 'sender@example.com' },
      recipients: [{ email: 'to@example.net' }],
      content: { subject: 'Hello', text_body: 'Hi', attachments: [ATTACHMENT] },
    });
  });

  it('keeps required fields required and set values checked', () => {
    const result = validatePayload(CreateMessageBody, {
      from: { email: '' },
      recipients: [{ email: 'to@example.net' }],
      subject: 'Hello',
      text_content: 'Hi',
      sandbox_result: 'explode',
      attachments: [{ ...ATTACHMENT, content_type: '' }],
    });
    expect(result.ok).toBe(false);
    const message = result.ok ? '' : result.message;
    expect(message).toContain('from.email must be an email');
    expect(message).toContain('sandbox_result must be one of the following values');
    expect(message).toContain('attachments.0.content_type must be longer than or equal to 1');
  });
});

describe('the idempotency of a send request', () => {
  const request = {
    account_id: '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60',
    api: 'v2',
    body: {
      from: FROM,
      recipients: [{ email: 'to@example.net' }],
      subject: 'Hi',
      text_content: 'Hi',
    },
  };
  const fingerprint = 'ab'.repeat(32);

  it('is optional', () => {
    expect(validatePayload(CreateMessageRequest, request).ok).toBe(true);
  });

  it('carries the key and the request fingerprint', () => {
    const result = validatePayload(CreateMessageRequest, {
      ...request,
      idempotency: { key: 'order-42', fingerprint },
    });
    expect(result.ok && result.value.idempotency).toEqual({ key: 'order-42', fingerprint });
  });

  it.each<[string, unknown]>([
    ['an empty key', { key: '', fingerprint }],
    ['a key over 255 characters', { key: 'k'.repeat(256), fingerprint }],
    ['no fingerprint', { key: 'order-42' }],
    ['a fingerprint that is not SHA-256 hex', { key: 'order-42', fingerprint: 'AB'.repeat(32) }],
    ['a short fingerprint', { key: 'order-42', fingerprint: 'ab' }],
  ])('refuses %s', (_what, idempotency) => {
    expect(validatePayload(CreateMessageRequest, { ...request, idempotency }).ok).toBe(false);
  });
});
