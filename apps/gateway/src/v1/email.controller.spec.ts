import type { CreateMessageResult, V1SendBody } from '@envoi/contracts-messages';

import { toV1Result, toV2Body } from './email.controller';

describe('v1 ↔ v2 mapping (spec 9)', () => {
  it('moves content.* to the top level and renames the bodies', () => {
    const v1: V1SendBody = {
      from: { email: 'app@example.com', name: 'App' },
      recipients: [{ email: 'r@example.net', name: 'R' }],
      content: {
        subject: 'Hi',
        text_body: 'text',
        html_body: '<p>html</p>',
        attachments: [{ data: 'x', content_type: 'text/plain', file_name: 'x.txt' }],
        headers: { 'X-A': '1' },
        reply_to: { email: 'reply@example.com' },
      },
    };
    expect(toV2Body(v1)).toEqual({
      from: { email: 'app@example.com', name: 'App' },
      recipients: [{ email: 'r@example.net', name: 'R' }],
      subject: 'Hi',
      text_content: 'text',
      html_content: '<p>html</p>',
      attachments: [{ data: 'x', content_type: 'text/plain', file_name: 'x.txt' }],
      headers: { 'X-A': '1' },
      reply_to: { email: 'reply@example.com' },
    });
  });

  it('leaves absent optional content out', () => {
    const body = toV2Body({
      from: { email: 'a@example.com' },
      recipients: [{ email: 'r@example.net' }],
      content: { subject: 'S', text_body: 't' },
    });
    expect(Object.keys(body).sort()).toEqual(['from', 'recipients', 'subject', 'text_content']);
  });

  it('counts successes and failures with address: reason errors', () => {
    const result: CreateMessageResult = {
      object: 'list',
      data: [
        {
          object: 'message',
          id: '<1@example.com>',
          recipient: { email: 'ok@example.net', name: '' },
          status: 'queued',
          error: null,
        },
        {
          object: 'message',
          id: null,
          recipient: { email: 'blocked@example.net', name: '' },
          status: 'error',
          error: 'recipient is suppressed',
        },
      ],
    };
    expect(toV1Result(result)).toEqual({
      success_count: 1,
      fail_count: 1,
      failed_recipients: ['blocked@example.net'],
      errors: ['blocked@example.net: recipient is suppressed'],
    });
  });
});
