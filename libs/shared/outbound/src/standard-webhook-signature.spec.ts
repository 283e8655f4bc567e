import { Webhook } from 'standardwebhooks';

import { signedHeaders } from './standard-webhook-signature';

describe('signedHeaders', () => {
  const secret = 'envoi-whsec-c2VjcmV0LWJ5dGVzLXRoYXQtYXJlLW5vdC1iYXNlNjQ';
  const body = JSON.stringify({ type: 'message.delivered', data: { subject: 'Grüße ✓' } });
  const nowSeconds = Math.floor(Date.now() / 1000);

  it('verifies with the standardwebhooks package keyed by the raw secret bytes', () => {
    const headers = signedHeaders(secret, 'evt-1', nowSeconds, body);
    const verifier = new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
    expect(verifier.verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': 'evt-1',
      'webhook-timestamp': String(nowSeconds),
    });
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });

  it('is refused for another body, id or secret', () => {
    const headers = signedHeaders(secret, 'evt-1', nowSeconds, body);
    const verifier = new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
    expect(() => verifier.verify(`${body} `, { ...headers })).toThrow();
    expect(() => verifier.verify(body, { ...headers, 'webhook-id': 'evt-2' })).toThrow();
    const other = new Webhook(Buffer.from(`${secret}x`, 'utf8'), { format: 'raw' });
    expect(() => other.verify(body, { ...headers })).toThrow();
  });
});
