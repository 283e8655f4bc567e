import { WebhookPayloadValidator } from '@envoi/shared-testing';

import { SuppressionEntity } from './suppression.entity';
import {
  deletedMessage,
  toCheckResult,
  toCreatedEventData,
  toSuppressionRecord,
} from './suppression.mapper';

const ACCOUNT_ID = '6a0b9a38-0000-4000-8000-0000000000aa';

function entity(overrides: Partial<SuppressionEntity> = {}): SuppressionEntity {
  return Object.assign(new SuppressionEntity(), {
    id: '6a0b9a38-0000-4000-8000-000000000001',
    seq: '42',
    accountId: ACCOUNT_ID,
    email: 'user@example.com',
    domain: 'mail.example.org',
    reason: 'Too many hard bounces',
    createdAt: new Date('2026-01-02T03:04:05.678Z'),
    expiresAt: new Date('2026-02-01T03:04:05.678Z'),
    source: 'automatic',
    ...overrides,
  });
}

describe('toSuppressionRecord', () => {
  it('maps every public field and hides the keyset position and the source', () => {
    expect(toSuppressionRecord(entity())).toEqual({
      object: 'suppression',
      id: '6a0b9a38-0000-4000-8000-000000000001',
      created_at: '2026-01-02T03:04:05.678Z',
      email: 'user@example.com',
      domain: 'mail.example.org',
      reason: 'Too many hard bounces',
      expires_at: '2026-02-01T03:04:05.678Z',
    });
  });

  it('answers null for an account-wide suppression and a missing reason', () => {
    expect(toSuppressionRecord(entity({ domain: null, reason: null }))).toMatchObject({
      domain: null,
      reason: null,
    });
  });
});

describe('toCreatedEventData', () => {
  it('carries the webhook fields of suppression.created', () => {
    expect(toCreatedEventData(entity())).toEqual({
      account_id: ACCOUNT_ID,
      recipient: 'user@example.com',
      created_at: '2026-01-02T03:04:05.678Z',
      expires_at: '2026-02-01T03:04:05.678Z',
      reason: 'Too many hard bounces',
      sending_domain: 'mail.example.org',
    });
  });

  it('sends an empty reason and sending_domain when the suppression has none', () => {
    expect(toCreatedEventData(entity({ reason: null, domain: null }))).toMatchObject({
      reason: '',
      sending_domain: '',
    });
  });

  it.each([
    ['with a reason and a domain', {}],
    ['without them', { reason: null, domain: null }],
  ])('is a webhooks.yaml suppression.created payload %s', (_case, overrides) => {
    const violations = new WebhookPayloadValidator().eventViolations({
      type: 'suppression.created',
      timestamp: '2026-01-02T03:04:05.678Z',
      data: toCreatedEventData(entity(overrides)),
    });
    expect(violations).toEqual([]);
  });
});

describe('toCheckResult', () => {
  it('answers each requested address as given, once, in request order, matched normalised', () => {
    const reasons = new Map<string, string | null>([
      ['a@example.com', 'bounced'],
      ['c@example.com', null],
    ]);

    expect(
      toCheckResult(
        [' C@Example.com', 'b@example.com', 'a@example.com', 'A@EXAMPLE.COM', 'a@example.com'],
        reasons,
      ),
    ).toEqual({
      suppressed: [
        { email: ' C@Example.com', reason: '' },
        { email: 'a@example.com', reason: 'bounced' },
        { email: 'A@EXAMPLE.COM', reason: 'bounced' },
      ],
    });
  });

  it('answers an empty list when nothing is suppressed', () => {
    expect(toCheckResult(['a@example.com'], new Map())).toEqual({ suppressed: [] });
  });
});

describe('deletedMessage', () => {
  it.each([
    [0, '0 suppressions deleted'],
    [1, '1 suppression deleted'],
    [12, '12 suppressions deleted'],
  ])('%i → %j', (count, message) => expect(deletedMessage(count)).toBe(message));
});
