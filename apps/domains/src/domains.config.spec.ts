import { ConfigError, loadConfig } from '@envoi/shared-config';

import { DomainsConfig } from './domains.config';

const BASE = {
  NATS_URL: 'nats://127.0.0.1:4222',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  DKIM_ENCRYPTION_KEY: '0123456789abcdef'.repeat(4),
};

describe('DomainsConfig', () => {
  it('has defaults for development', () => {
    const config = loadConfig(DomainsConfig, BASE);

    expect(config).toMatchObject({
      SPF_INCLUDE_DOMAIN: 'spf.envoi.test',
      RETURN_PATH_TARGET: 'bounces.envoi.test',
      TRACKING_TARGET: 'track.envoi.test',
      INBOUND_MX_HOST: 'mx.envoi.test',
      DNS_CHECK_CACHE_MS: 60_000,
      DNS_RECHECK_INTERVAL_MS: 900_000,
    });
    expect(config.dnsServers()).toBeNull();
  });

  it('reads resolvers and normalises endpoint hostnames', () => {
    const config = loadConfig(DomainsConfig, {
      ...BASE,
      DNS_SERVERS: '127.0.0.1:5353,[::1]:53,10.0.0.2',
      SPF_INCLUDE_DOMAIN: 'SPF.Mail.Example.',
    });

    expect(config.dnsServers()).toEqual(['127.0.0.1:5353', '[::1]:53', '10.0.0.2']);
    expect(config.SPF_INCLUDE_DOMAIN).toBe('spf.mail.example');
  });

  it.each([
    [{ DKIM_ENCRYPTION_KEY: undefined }, 'DKIM_ENCRYPTION_KEY must be 64 hexadecimal characters'],
    [
      { DKIM_ENCRYPTION_KEY: 'z'.repeat(64) },
      'DKIM_ENCRYPTION_KEY must be 64 hexadecimal characters',
    ],
    [
      { DKIM_ENCRYPTION_KEY: 'ab'.repeat(16) },
      'DKIM_ENCRYPTION_KEY must be 64 hexadecimal characters',
    ],
    [{ DNS_SERVERS: '127.0.0.1:53,,x' }, 'DNS_SERVERS must be host:port entries'],
    [{ TRACKING_TARGET: 'localhost' }, 'TRACKING_TARGET must be a hostname'],
    [{ DNS_RECHECK_INTERVAL_MS: '10' }, 'DNS_RECHECK_INTERVAL_MS must not be less than 1000'],
  ])('refuses %j', (overrides, message) => {
    expect(() => loadConfig(DomainsConfig, { ...BASE, ...overrides })).toThrow(ConfigError);
    expect(() => loadConfig(DomainsConfig, { ...BASE, ...overrides })).toThrow(message);
  });
});
