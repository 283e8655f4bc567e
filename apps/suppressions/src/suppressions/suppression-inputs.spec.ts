import { CodedError } from '@envoi/contracts-core';
import { SuppressionsErrorCode } from '@envoi/contracts-suppressions';

import { listCriteria, optionalDomain, requireDomain, requireEmail } from './suppression-inputs';

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof CodedError ? error.code : 'not a coded error';
  }
  return undefined;
}

describe('requireEmail', () => {
  it('normalises', () => {
    expect(requireEmail('  Someone@Example.COM ')).toBe('someone@example.com');
  });

  it.each(['', '   ', 'nope', 'a@localhost', 'a@b@example.com'])('refuses %j', (raw) => {
    expect(codeOf(() => requireEmail(raw))).toBe(SuppressionsErrorCode.InvalidEmail);
  });
});

describe('requireDomain and optionalDomain', () => {
  it('normalises a hostname', () => {
    expect(requireDomain(' Mail.Example.COM. ')).toBe('mail.example.com');
    expect(optionalDomain('Example.org')).toBe('example.org');
  });

  it('takes omitted and null as every domain', () => {
    expect(optionalDomain(undefined)).toBeNull();
    expect(optionalDomain(null)).toBeNull();
  });

  it.each(['', 'localhost', 'not a domain', '-bad.example.com', '192.0.2.1'])(
    'refuses %j',
    (raw) => {
      expect(codeOf(() => requireDomain(raw))).toBe(SuppressionsErrorCode.InvalidDomain);
      expect(codeOf(() => optionalDomain(raw))).toBe(SuppressionsErrorCode.InvalidDomain);
    },
  );
});

describe('listCriteria', () => {
  it('normalises the filters and parses the times', () => {
    expect(
      listCriteria({
        email: ' A@Example.com',
        domain: 'Example.ORG',
        from_time: '2030-01-01T00:00:00+01:00',
        to_time: '2030-01-02T00:00:00Z',
      }),
    ).toEqual({
      email: 'a@example.com',
      domain: 'example.org',
      from: new Date('2029-12-31T23:00:00Z'),
      to: new Date('2030-01-02T00:00:00Z'),
    });
    expect(listCriteria(undefined)).toEqual({});
  });

  it('refuses a range that ends before it starts, and bad filters', () => {
    expect(
      codeOf(() =>
        listCriteria({ from_time: '2030-01-02T00:00:00Z', to_time: '2030-01-01T00:00:00Z' }),
      ),
    ).toBe(SuppressionsErrorCode.InvalidTimeRange);
    expect(codeOf(() => listCriteria({ email: 'x' }))).toBe(SuppressionsErrorCode.InvalidEmail);
    expect(codeOf(() => listCriteria({ domain: 'x' }))).toBe(SuppressionsErrorCode.InvalidDomain);
  });
});
