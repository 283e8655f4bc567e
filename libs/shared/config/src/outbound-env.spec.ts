import { MicroserviceEnv } from './base-env';
import { loadConfig } from './load-config';
import { OutboundAllowCidrs, OutboundAllowHttp } from './outbound-env';

class CallerEnv extends MicroserviceEnv {
  @OutboundAllowHttp() OUTBOUND_ALLOW_HTTP: boolean = false;
  @OutboundAllowCidrs() OUTBOUND_ALLOW_CIDRS: string = '';
}

const REQUIRED = {
  NATS_URL: 'nats://127.0.0.1:4222',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
};

function load(overrides: Record<string, string>): unknown {
  try {
    const config = loadConfig(CallerEnv, { ...REQUIRED, ...overrides });
    return { http: config.OUTBOUND_ALLOW_HTTP, cidrs: config.OUTBOUND_ALLOW_CIDRS };
  } catch (error) {
    return (error as Error).message;
  }
}

describe('outbound settings', () => {
  it('deny http and private targets by default', () => {
    expect(load({})).toEqual({ http: false, cidrs: '' });
  });

  it('read true/false and a CIDR list', () => {
    expect(
      load({ OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8,::1/128' }),
    ).toEqual({ http: true, cidrs: '127.0.0.0/8,::1/128' });
    expect(load({ OUTBOUND_ALLOW_HTTP: 'FALSE' })).toEqual({ http: false, cidrs: '' });
  });

  it('refuse other values', () => {
    expect(load({ OUTBOUND_ALLOW_HTTP: 'yes' })).toMatch(
      /OUTBOUND_ALLOW_HTTP must be true or false/,
    );
    expect(load({ OUTBOUND_ALLOW_CIDRS: 'localhost' })).toMatch(
      /OUTBOUND_ALLOW_CIDRS must be CIDRs separated by commas/,
    );
    expect(load({ OUTBOUND_ALLOW_CIDRS: '0.0.0.0/0' })).toMatch(/OUTBOUND_ALLOW_CIDRS must be/);
  });
});
