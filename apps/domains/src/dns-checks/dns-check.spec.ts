import type { ExpectedRecord } from '../domains/dns-records';
import { mergeChecks } from './dns-check.service';
import { forEachLimited } from './dns-monitor.service';

const record = (key: ExpectedRecord['key'], host: string): ExpectedRecord => ({
  key,
  type: 'TXT',
  label: key,
  host,
  content: `${key} content`,
  required: true,
  verification: { kind: 'dmarc', domain: 'x.test' },
});

describe('mergeChecks', () => {
  it('records passes and failures, and keeps what was known when DNS did not answer', () => {
    const previous = {
      spf: { host: 'a.test', content: 'spf content', propagated: true },
      dkim: { host: 's._domainkey.a.test', content: 'dkim content', propagated: true },
    };

    expect(
      mergeChecks(previous, [
        { record: record('spf', 'a.test'), outcome: { status: 'transient', reason: 'ETIMEOUT' } },
        {
          record: record('dkim', 's._domainkey.a.test'),
          outcome: { status: 'fail', reason: 'gone' },
        },
        { record: record('dmarc', '_dmarc.a.test'), outcome: { status: 'pass' } },
        { record: record('mx', 'a.test'), outcome: { status: 'transient', reason: 'ESERVFAIL' } },
      ]),
    ).toEqual({
      spf: { host: 'a.test', content: 'spf content', propagated: true },
      dkim: { host: 's._domainkey.a.test', content: 'dkim content', propagated: false },
      dmarc: { host: '_dmarc.a.test', content: 'dmarc content', propagated: true },
    });
  });
});

describe('forEachLimited', () => {
  it('runs every item with at most `limit` in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const done: number[] = [];

    await forEachLimited([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      done.push(item);
      inFlight--;
    });

    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(3);
  });
});
