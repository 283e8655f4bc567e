import type { AccountEntity } from '../accounts/account.entity';
import { toSubAccountRecord } from './sub-account.mapper';

const child = {
  id: 'c',
  parentAccountId: 'p',
  createdAt: new Date('2026-01-02T03:04:05.000Z'),
  name: 'Acme',
  website: 'acme.example.com',
  monthlyCredit: 5,
  deletedAt: null,
  suspendedAt: new Date('2026-02-01T00:00:00.000Z'),
  lastActivityAt: null,
} as unknown as AccountEntity;

describe('toSubAccountRecord', () => {
  it('maps every field, the status derived with the parent', () => {
    expect(toSubAccountRecord(child, null, { domainCount: 2, memberCount: 1 })).toEqual({
      object: 'sub_account',
      id: 'c',
      parent_account_id: 'p',
      created_at: '2026-01-02T03:04:05.000Z',
      name: 'Acme',
      website: 'acme.example.com',
      status: 'suspended',
      monthly_credit: 5,
      domain_count: 2,
      member_count: 1,
      last_activity_at: null,
    });
    const later = new Date('2026-03-01T00:00:00.000Z');
    expect(
      toSubAccountRecord({ ...child, lastActivityAt: later }, later, {
        domainCount: 0,
        memberCount: 0,
      }),
    ).toMatchObject({ status: 'parent-suspended', last_activity_at: later.toISOString() });
  });
});
