import { randomBytes } from 'node:crypto';

import type { WebhooksConfig } from '../webhooks.config';
import { WebhookSecrets } from './webhook-secrets';

const withKey = (key: string | undefined) =>
  new WebhookSecrets({ WEBHOOKS_SECRET_KEY: key } as WebhooksConfig);

describe('WebhookSecrets', () => {
  const secrets = withKey(randomBytes(32).toString('hex'));

  it('opens what it sealed, for the same webhook only', () => {
    const sealed = secrets.seal('envoi-whsec-abc', 'webhook-1');
    expect(sealed).not.toContain('abc');
    expect(secrets.open(sealed, 'webhook-1')).toBe('envoi-whsec-abc');
    expect(() => secrets.open(sealed, 'webhook-2')).toThrow();
  });

  it('refuses another key, and reads nothing without one', () => {
    const sealed = secrets.seal('envoi-whsec-abc', 'webhook-1');
    expect(() => withKey(randomBytes(32).toString('hex')).open(sealed, 'webhook-1')).toThrow();
    expect(() => withKey(undefined).open(sealed, 'webhook-1')).toThrow(
      'WEBHOOKS_SECRET_KEY is not set',
    );
  });
});
