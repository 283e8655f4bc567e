import { Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

import { MicroserviceEnv, ServiceEnv } from './base-env';
import { ConfigError, loadConfig } from './load-config';
import {
  EventConsumerServiceEnv,
  OutboxEventConsumerServiceEnv,
  OutboxServiceEnv,
} from './service-envs';
import { IsDnsServerList, IsHostnameSetting, normalizeHostname } from './setting-decorators';

const REQUIRED = {
  NATS_URL: 'nats://127.0.0.1:4222',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
};

class ConsumerEnv extends EventConsumerServiceEnv {}
class RelayEnv extends OutboxServiceEnv {}
class BothEnv extends OutboxEventConsumerServiceEnv {}

/** A service that deliberately differs from the shared default and bound of one setting. */
class SlowShutdownEnv extends OutboxServiceEnv {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(600_000)
  override SHUTDOWN_GRACE_MS: number = 10_000;
}

class HostsEnv extends ServiceEnv {
  @IsOptional() @IsDnsServerList() DNS_SERVERS?: string;
  @IsOptional() @Transform(normalizeHostname) @IsHostnameSetting('mx.example.com') HOST: string =
    'mx.envoi.test';
}

/** What loading `schema` with `overrides` answers: the setting's value, or the error message. */
function outcome<T extends object>(
  schema: new () => T,
  key: keyof T,
  overrides: Record<string, string>,
): unknown {
  try {
    return loadConfig(schema, { ...REQUIRED, ...overrides })[key];
  } catch (error) {
    return (error as Error).message;
  }
}

describe('service env base classes', () => {
  it('give every service the same pool and shutdown defaults', () => {
    expect(loadConfig(MicroserviceEnv, REQUIRED)).toMatchObject({
      DATABASE_POOL_SIZE: 10,
      SHUTDOWN_GRACE_MS: 3_000,
    });
  });

  it('add their groups of settings, with their defaults', () => {
    expect(loadConfig(BothEnv, REQUIRED)).toMatchObject({
      DATABASE_POOL_SIZE: 10,
      SHUTDOWN_GRACE_MS: 3_000,
      EVENTS_BATCH: 32,
      EVENTS_ACK_WAIT_MS: 30_000,
      EVENTS_RETRY_MS: 1_000,
      OUTBOX_RELAY_INTERVAL_MS: 1_000,
      OUTBOX_RELAY_BATCH: 100,
    });
  });

  it('add only their own groups', () => {
    const consumer = loadConfig(ConsumerEnv, { ...REQUIRED, OUTBOX_RELAY_BATCH: '5' });
    const relay = loadConfig(RelayEnv, { ...REQUIRED, EVENTS_BATCH: '5' });

    expect(consumer).not.toHaveProperty('OUTBOX_RELAY_BATCH');
    expect(relay).not.toHaveProperty('EVENTS_BATCH');
  });

  it('convert and validate their settings', () => {
    expect(loadConfig(BothEnv, { ...REQUIRED, EVENTS_BATCH: '256' }).EVENTS_BATCH).toBe(256);
    expect(() => loadConfig(BothEnv, { ...REQUIRED, EVENTS_BATCH: '257' })).toThrow(
      'EVENTS_BATCH must not be greater than 256',
    );
    expect(() => loadConfig(ConsumerEnv, { ...REQUIRED, EVENTS_RETRY_MS: 'soon' })).toThrow(
      'EVENTS_RETRY_MS must be an integer',
    );
    expect(() => loadConfig(RelayEnv, { ...REQUIRED, OUTBOX_RELAY_INTERVAL_MS: '9' })).toThrow(
      ConfigError,
    );
  });

  it.each([
    ['OUTBOX_RELAY_INTERVAL_MS', ['', 'x', '9', '10', '1.5', '60000', '60001']],
    ['OUTBOX_RELAY_BATCH', ['', 'x', '0', '1', '1000', '1001']],
  ] as const)('declare %s the same way in both outbox classes', (key, values) => {
    for (const value of values) {
      expect(outcome(BothEnv, key, { [key]: value })).toEqual(
        outcome(RelayEnv, key, { [key]: value }),
      );
    }
    expect(outcome(BothEnv, key, { OUTBOX_RELAY_BATCH: 'x', OUTBOX_RELAY_INTERVAL_MS: 'x' })).toBe(
      outcome(RelayEnv, key, { OUTBOX_RELAY_BATCH: 'x', OUTBOX_RELAY_INTERVAL_MS: 'x' }),
    );
  });

  it('let a service override one setting, default and bounds together', () => {
    expect(loadConfig(SlowShutdownEnv, REQUIRED).SHUTDOWN_GRACE_MS).toBe(10_000);
    expect(outcome(SlowShutdownEnv, 'SHUTDOWN_GRACE_MS', { SHUTDOWN_GRACE_MS: '600000' })).toBe(
      600_000,
    );
    expect(outcome(SlowShutdownEnv, 'SHUTDOWN_GRACE_MS', { SHUTDOWN_GRACE_MS: '600001' })).toMatch(
      'SHUTDOWN_GRACE_MS must not be greater than 600000',
    );
    expect(outcome(MicroserviceEnv, 'SHUTDOWN_GRACE_MS', { SHUTDOWN_GRACE_MS: '60001' })).toMatch(
      'SHUTDOWN_GRACE_MS must not be greater than 60000',
    );
  });
});

describe('setting decorators', () => {
  it('check resolver lists, and normalise and check hostnames', () => {
    const config = loadConfig(HostsEnv, {
      ...REQUIRED,
      DNS_SERVERS: '127.0.0.1:5353,[::1]:53,10.0.0.2',
      HOST: ' MX.Example.COM. ',
    });
    expect(config.DNS_SERVERS).toBe('127.0.0.1:5353,[::1]:53,10.0.0.2');
    expect(config.HOST).toBe('mx.example.com');
    expect(() => loadConfig(HostsEnv, { ...REQUIRED, DNS_SERVERS: 'a b' })).toThrow(
      'DNS_SERVERS must be host:port entries separated by commas',
    );
    expect(() => loadConfig(HostsEnv, { ...REQUIRED, HOST: 'localhost' })).toThrow(
      'HOST must be a hostname such as mx.example.com',
    );
  });
});
