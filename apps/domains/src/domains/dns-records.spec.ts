import { expectedRecords, isDnsValid, isPropagated, type RecordChecks } from './dns-records';

const ENDPOINTS = {
  spfInclude: 'spf.envoi.test',
  returnPathTarget: 'bounces.envoi.test',
  trackingTarget: 'track.envoi.test',
  inboundMxHost: 'mx.envoi.test',
};

const SETTINGS = {
  domain: 'example.com',
  selector: 'envoi',
  publicKey: 'KEY',
  trackingSubdomain: 'click',
  returnPathSubdomain: 'bounces',
  subscriptionSubdomain: null,
  mediaSubdomain: null,
};

describe('expectedRecords', () => {
  it('lists SPF, DKIM and DMARC as required, the CNAMEs and MX as optional', () => {
    expect(
      expectedRecords(SETTINGS, ENDPOINTS).map(({ key, type, host, content, required }) => ({
        key,
        type,
        host,
        content,
        required,
      })),
    ).toEqual([
      {
        key: 'spf',
        type: 'TXT',
        host: 'example.com',
        content: 'v=spf1 include:spf.envoi.test ~all',
        required: true,
      },
      {
        key: 'dkim',
        type: 'TXT',
        host: 'envoi._domainkey.example.com',
        content: 'v=DKIM1; k=rsa; p=KEY',
        required: true,
      },
      {
        key: 'dmarc',
        type: 'TXT',
        host: '_dmarc.example.com',
        content: 'v=DMARC1; p=quarantine; sp=none; adkim=r; aspf=r;',
        required: true,
      },
      {
        key: 'return_path',
        type: 'CNAME',
        host: 'bounces.example.com',
        content: 'bounces.envoi.test',
        required: false,
      },
      {
        key: 'tracking',
        type: 'CNAME',
        host: 'click.example.com',
        content: 'track.envoi.test',
        required: false,
      },
      { key: 'mx', type: 'MX', host: 'example.com', content: '10 mx.envoi.test', required: false },
    ]);
  });

  it('adds the subscription and media CNAMEs when they are set', () => {
    const records = expectedRecords(
      { ...SETTINGS, subscriptionSubdomain: 'prefs', mediaSubdomain: 'media' },
      ENDPOINTS,
    );

    expect(records.map((record) => record.host)).toContain('prefs.example.com');
    expect(records.map((record) => record.host)).toContain('media.example.com');
  });
});

describe('validity', () => {
  const records = expectedRecords(SETTINGS, ENDPOINTS);
  const passing = (keys: string[]): RecordChecks =>
    Object.fromEntries(
      records
        .filter((record) => keys.includes(record.key))
        .map((record) => [
          record.key,
          { host: record.host, content: record.content, propagated: true },
        ]),
    );

  it('needs every required record and nothing else', () => {
    expect(isDnsValid(records, passing(['spf', 'dkim', 'dmarc']))).toBe(true);
    expect(isDnsValid(records, passing(['spf', 'dkim', 'return_path', 'tracking', 'mx']))).toBe(
      false,
    );
  });

  it('ignores a result found for another host or content (the record changed since)', () => {
    const checks = passing(['spf', 'dkim', 'dmarc']);
    const moved = expectedRecords({ ...SETTINGS, selector: 'other' }, ENDPOINTS);

    expect(isPropagated(moved[1], checks)).toBe(false);
    expect(isDnsValid(moved, checks)).toBe(false);
  });
});
