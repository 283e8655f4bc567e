import { validatePayload } from '@envoi/contracts-core';

import { isSuppressibleEmail, normalizeEmail, parseRfc3339 } from './addresses';
import {
  CheckSuppressionsRequest,
  CreateAutomaticSuppressionRequest,
  CreateSuppressionBody,
  CreateSuppressionRequest,
  ListSuppressionsRequest,
} from './requests';
import { SuppressionsStreamSubjects, SuppressionsSubjects } from './subjects';

const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';

function failure(result: ReturnType<typeof validatePayload>): string {
  if (result.ok) throw new Error('expected validation to fail');
  return result.message;
}

describe('normalizeEmail and isSuppressibleEmail', () => {
  it('trims and lowercases the whole address', () => {
    expect(normalizeEmail('  John.Doe+Tag@Example.COM \n')).toBe('john.doe+tag@example.com');
  });

  it.each(['a@example.com', 'x.y+z@sub.example.co.uk', 'ünï@example.com'])('accepts %j', (email) =>
    expect(isSuppressibleEmail(email)).toBe(true),
  );

  it.each([
    '',
    'not-an-email',
    'a@localhost',
    'a@@example.com',
    'a b@example.com',
    'Name <a@example.com>',
    'a@[192.0.2.1]',
    `${'a'.repeat(65)}@example.com`,
    `a@${'b'.repeat(250)}.com`,
  ])('refuses %j', (email) => expect(isSuppressibleEmail(email)).toBe(false));
});

describe('parseRfc3339', () => {
  it('parses date-times with Z, offsets and fractions', () => {
    expect(parseRfc3339('2030-01-01T00:00:00Z')?.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(parseRfc3339('2030-01-01T02:00:00.5+02:00')?.toISOString()).toBe(
      '2030-01-01T00:00:00.500Z',
    );
  });

  it.each(['2030-01-01', '2030-01-01T00:00:00', 'tomorrow', '1893456000', '2030-13-01T00:00:00Z'])(
    'refuses %j',
    (value) => expect(parseRfc3339(value)).toBeNull(),
  );
});

describe('CreateSuppressionRequest', () => {
  it('accepts the contract body and strips unknown fields', () => {
    const result = validatePayload(CreateSuppressionRequest, {
      account_id: ACCOUNT_ID,
      body: {
        email: 'a@example.com',
        expires_at: '2030-01-01T00:00:00Z',
        domain: null,
        reason: 'asked',
        is_admin: true,
      },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.body).toBeInstanceOf(CreateSuppressionBody);
    expect({ ...result.value.body }).toEqual({
      email: 'a@example.com',
      expires_at: '2030-01-01T00:00:00Z',
      domain: undefined,
      reason: 'asked',
    });
  });

  it('reads an empty domain and reason as absent (Go clients send every field)', () => {
    const result = validatePayload(CreateSuppressionRequest, {
      account_id: ACCOUNT_ID,
      body: { email: 'a@example.com', expires_at: '2030-01-01T00:00:00Z', domain: '', reason: '' },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(JSON.parse(JSON.stringify(result.value.body))).toEqual({
      email: 'a@example.com',
      expires_at: '2030-01-01T00:00:00Z',
    });
  });

  it('requires email and an RFC 3339 expires_at, and bounds the reason', () => {
    const message = failure(
      validatePayload(CreateSuppressionRequest, {
        account_id: ACCOUNT_ID,
        body: { expires_at: '2030-01-01', reason: 'x'.repeat(256) },
      }),
    );
    expect(message).toContain('body.email must be a string');
    expect(message).toContain('body.expires_at must be an RFC 3339 date-time');
    expect(message).toContain('body.reason must be shorter than or equal to 255 characters');
  });
});

describe('ListSuppressionsRequest', () => {
  it('takes optional filters and a page', () => {
    expect(
      validatePayload(ListSuppressionsRequest, {
        account_id: ACCOUNT_ID,
        page: { limit: 10 },
        filters: { email: 'a@example.com', from_time: '2030-01-01T00:00:00Z' },
      }).ok,
    ).toBe(true);
    expect(
      failure(
        validatePayload(ListSuppressionsRequest, {
          account_id: ACCOUNT_ID,
          filters: { to_time: 'yesterday' },
        }),
      ),
    ).toContain('filters.to_time must be an RFC 3339 date-time');
  });
});

describe('CheckSuppressionsRequest', () => {
  const request = (emails: unknown) => ({ account_id: ACCOUNT_ID, domain: 'example.com', emails });

  it('takes 1 to 1000 addresses', () => {
    expect(validatePayload(CheckSuppressionsRequest, request(['a@example.com'])).ok).toBe(true);
    expect(
      validatePayload(
        CheckSuppressionsRequest,
        request(Array.from({ length: 1_000 }, (_, i) => `r${i}@example.com`)),
      ).ok,
    ).toBe(true);
    expect(validatePayload(CheckSuppressionsRequest, request([])).ok).toBe(false);
    expect(
      validatePayload(
        CheckSuppressionsRequest,
        request(Array.from({ length: 1_001 }, (_, i) => `r${i}@example.com`)),
      ).ok,
    ).toBe(false);
    expect(failure(validatePayload(CheckSuppressionsRequest, request([5])))).toContain(
      'each value in emails must be a string',
    );
  });

  it('needs the account and the sender domain', () => {
    const message = failure(validatePayload(CheckSuppressionsRequest, { emails: ['a@b.com'] }));
    expect(message).toContain('account_id must be a UUID');
    expect(message).toContain('domain must be a string');
  });
});

describe('CreateAutomaticSuppressionRequest', () => {
  it('needs a reason; the domain and expiry are optional', () => {
    expect(
      validatePayload(CreateAutomaticSuppressionRequest, {
        account_id: ACCOUNT_ID,
        email: 'a@example.com',
        reason: 'Too many hard bounces',
      }).ok,
    ).toBe(true);
    expect(
      failure(
        validatePayload(CreateAutomaticSuppressionRequest, {
          account_id: ACCOUNT_ID,
          email: 'a@example.com',
          reason: '',
        }),
      ),
    ).toContain('reason must be longer than or equal to 1 characters');
  });
});

describe('subjects', () => {
  it('are versioned request subjects, and a stream subject of the events stream', () => {
    expect(SuppressionsSubjects.check.name).toBe('suppressions.suppression.check.v1');
    expect(SuppressionsSubjects.createAutomatic.name).toBe(
      'suppressions.suppression.create-automatic.v1',
    );
    expect(SuppressionsSubjects.snapshot.name).toBe('suppressions.suppression.snapshot.v1');
    expect(SuppressionsSubjects.changed).toEqual({
      kind: 'event',
      name: 'suppressions.suppression.changed.v1',
    });
    expect(SuppressionsStreamSubjects.created).toEqual({
      kind: 'stream',
      stream: 'EVENTS',
      name: 'events.suppression.created.v1',
    });
  });
});
