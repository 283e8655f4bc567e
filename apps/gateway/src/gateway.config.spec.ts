import { ConfigError, loadConfig } from '@envoi/shared-config';

import { GatewayConfig } from './gateway.config';

const REQUIRED = {
  NATS_URL: 'nats://127.0.0.1:4222',
  TLS_CERT_FILE: '/tls/cert.pem',
  TLS_KEY_FILE: '/tls/key.pem',
  CURSOR_SECRET: 'x'.repeat(32),
  DATABASE_URL: 'postgres://envoi@127.0.0.1:5432/envoi',
  IDEMPOTENCY_ENCRYPTION_KEY: 'ab'.repeat(32),
};

describe('GatewayConfig', () => {
  it('converts numeric settings from the environment', () => {
    const config = loadConfig(GatewayConfig, {
      ...REQUIRED,
      HTTPS_PORT: '18443',
      API_KEY_USAGE_FLUSH_MS: '500',
    });
    expect(config.HTTPS_PORT).toBe(18443);
    expect(config.API_KEY_USAGE_FLUSH_MS).toBe(500);
  });

  it('applies defaults', () => {
    const config = loadConfig(GatewayConfig, REQUIRED);
    expect(config.HTTPS_PORT).toBe(8443);
    expect(config.API_KEY_CACHE_TTL_MS).toBe(5000);
    expect(config.trustedProxies()).toEqual([]);
  });

  it('fails fast, naming every bad setting', () => {
    expect(() =>
      loadConfig(GatewayConfig, { ...REQUIRED, HTTPS_PORT: 'x', CURSOR_SECRET: 'short' }),
    ).toThrow(ConfigError);
    expect(() => loadConfig(GatewayConfig, { ...REQUIRED, NATS_URL: 'http://x' })).toThrow(
      /NATS_URL/,
    );
  });

  it('reads the trusted proxy list', () => {
    const config = loadConfig(GatewayConfig, {
      ...REQUIRED,
      TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.3',
    });
    expect(config.trustedProxies()).toEqual(['10.0.0.0/8', '127.0.0.3']);
  });
});
