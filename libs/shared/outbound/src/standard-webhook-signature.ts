import { createHmac } from 'node:crypto';

/** The Standard Webhooks headers of one attempt (a type, so that it is a header record as it is). */
export type SignedHeaders = {
  'content-type': 'application/json';
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/**
 * Signs `{id}.{timestamp}.{body}` with HMAC-SHA256 keyed by the UTF-8 bytes of the whole secret,
 * prefix included (webhooks.yaml: never base64-decoded).
 */
export function signedHeaders(
  secret: string,
  webhookId: string,
  unixSeconds: number,
  body: string,
): SignedHeaders {
  const timestamp = String(unixSeconds);
  const signature = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${webhookId}.${timestamp}.`, 'utf8')
    // Hashed apart from its prefix: the body is not copied into a second string first.
    .update(body, 'utf8')
    .digest('base64');
  return {
    'content-type': 'application/json',
    'webhook-id': webhookId,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
}
