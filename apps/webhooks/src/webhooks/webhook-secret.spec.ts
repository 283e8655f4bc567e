import { generateWebhookSecret, WEBHOOK_SECRET_PREFIX } from './webhook-secret';

describe('generateWebhookSecret', () => {
  it('is the platform prefix and at least 24 random bytes in base64url', () => {
    const secret = generateWebhookSecret();
    expect(secret.startsWith(WEBHOOK_SECRET_PREFIX)).toBe(true);
    const random = secret.slice(WEBHOOK_SECRET_PREFIX.length);
    expect(random).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(random, 'base64url').length).toBeGreaterThanOrEqual(24);
  });

  it('differs every time', () => {
    expect(generateWebhookSecret()).not.toBe(generateWebhookSecret());
  });
});
