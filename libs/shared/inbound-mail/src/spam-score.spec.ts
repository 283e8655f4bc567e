import { assessSpam } from './spam-score';

const CLEAN = {
  headers: [
    { name: 'Date', value: 'Mon, 6 May 2024 13:15:46 +0000' },
    { name: 'Message-ID', value: '<1@example.com>' },
    { name: 'Authentication-Results', value: 'mx; spf=pass; dkim=pass; dmarc=pass' },
  ],
  from: [{ name: 'Maria', address: 'maria@example.com' }],
  subject: 'Question about my invoice',
  html: '<p>Hello</p>',
  leafContentTypes: ['text/plain', 'text/html'],
};

function rulesOf(input: typeof CLEAN): string[] {
  return assessSpam(input).signals.map((signal) => signal.rule);
}

describe('assessSpam', () => {
  it('scores an authenticated, well-formed message 0', () => {
    expect(assessSpam(CLEAN)).toEqual({ score: 0, signals: [] });
  });

  it.each([
    [
      'spf_fail',
      { headers: [...CLEAN.headers, { name: 'Authentication-Results', value: 'mx; spf=fail' }] },
      3,
    ],
    [
      'spf_softfail',
      {
        headers: [{ name: 'authentication-results', value: 'mx; spf=softfail' }, ...CLEAN.headers],
      },
      1.5,
    ],
    [
      'dkim_fail',
      { headers: [...CLEAN.headers, { name: 'Authentication-Results', value: 'mx; dkim=fail' }] },
      2,
    ],
    [
      'dmarc_fail',
      { headers: [...CLEAN.headers, { name: 'Authentication-Results', value: 'mx; dmarc=fail' }] },
      2.5,
    ],
    ['no_from', { from: [] }, 2],
    ['no_date', { headers: CLEAN.headers.filter((field) => field.name !== 'Date') }, 1],
    [
      'no_message_id',
      { headers: CLEAN.headers.filter((field) => field.name !== 'Message-ID') },
      1.5,
    ],
    ['subject_all_caps', { subject: 'URGENT: ACT NOW!!!' }, 1.5],
    ['html_only', { leafContentTypes: ['text/html'] }, 1],
    ['many_links', { html: '<a href="https://example.com/x">x</a>'.repeat(16) }, 1],
    ['ip_address_link', { html: '<a href="http://192.0.2.1/login">log in</a>' }, 2],
  ])('%s adds its points', (rule, change, points) => {
    const input = { ...CLEAN, ...change };

    expect(rulesOf(input)).toEqual([rule]);
    expect(assessSpam(input).score).toBe(points);
  });

  it('does not shout for short or caseless subjects', () => {
    expect(rulesOf({ ...CLEAN, subject: 'RE: OK' })).toEqual([]);
    expect(rulesOf({ ...CLEAN, subject: '请确认您的订单信息' })).toEqual([]);
  });

  it('takes an upstream X-Spam-Score only when it is higher', () => {
    const higher = {
      ...CLEAN,
      headers: [...CLEAN.headers, { name: 'X-Spam-Score', value: '7.3' }],
    };
    const lower = {
      ...CLEAN,
      from: [],
      headers: [...CLEAN.headers, { name: 'X-Spam-Score', value: '-10' }],
    };

    expect(assessSpam(higher).score).toBe(7.3);
    expect(assessSpam(lower).score).toBe(2);
  });
});
