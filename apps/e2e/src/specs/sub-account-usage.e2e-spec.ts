import { randomUUID } from 'node:crypto';

import type {
  CreatedApiKeyRecord,
  SubAccountRecord,
  SubAccountsUsageRecord,
} from '@envoi/contracts-accounts';
import type { CreateMessageResult } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { KeyClient } from '../support/api-client';
import { createVerifiedDomain } from '../support/domains';
import { expectError } from '../support/expect-error';

const CHILD_SCOPES = ['domains:read', 'domains:write', 'messages:send:all'];

/** A sub-account made through the public API, with a key of its own and a verified domain. */
interface Child {
  session: AccountSession;
  from: string;
}

async function provisionChild(parent: AccountSession, monthlyCredit = 0): Promise<Child> {
  const created = await parent.api.post<SubAccountRecord>(parent.path('/sub-accounts'), {
    name: `usage-${randomUUID().slice(0, 8)}`,
    website: 'usage.example.com',
    monthly_credit: monthlyCredit,
  });
  expect(created.status).toBe(201);
  const key = await parent.api.post<CreatedApiKeyRecord>(
    parent.path(`/sub-accounts/${created.body.id}/api-keys`),
    { label: 'usage', scopes: CHILD_SCOPES },
  );
  expect(key.status).toBe(201);
  const session: AccountSession = {
    accountId: created.body.id,
    created: parent.created,
    api: new KeyClient(key.body.secret_key),
    path: (suffix = '') => `/v2/accounts/${created.body.id}${suffix}`,
  };
  const domain = await createVerifiedDomain(session);
  return { session, from: `app@${domain.domain}` };
}

function sendOne(session: AccountSession, from: string) {
  return session.api.post<CreateMessageResult>(session.path('/messages'), {
    from: { email: from },
    recipients: [{ email: `r-${randomUUID().slice(0, 8)}@example.net` }],
    subject: 'usage',
    text_content: 'usage',
  });
}

async function sendMany(session: AccountSession, from: string, count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const response = await sendOne(session, from);
    expect(response.status).toBe(202);
  }
}

describe('sub-account usage and monthly credit', () => {
  let parent: AccountSession;

  beforeAll(async () => {
    parent = await createAccountSession();
  });
  afterAll(() => closeSessions());

  it('reports the sends of the parent and of each child once counted, as the contract says', async () => {
    const first = await provisionChild(parent);
    const second = await provisionChild(parent);
    const parentDomain = await createVerifiedDomain(parent);
    await sendMany(parent, `app@${parentDomain.domain}`, 1);
    await sendMany(first.session, first.from, 2);
    await sendMany(second.session, second.from, 3);

    const usage = await pollUntil(
      async () =>
        (await parent.api.get<SubAccountsUsageRecord>(parent.path('/sub-accounts/usage'))).body,
      (report) => report.total?.reception_count === 6,
      { timeoutMs: 30_000, what: 'the six sends to be counted' },
    );

    expect(usage.parent).toMatchObject({ account_id: parent.accountId, reception_count: 1 });
    const counts = Object.fromEntries(
      usage.sub_accounts.map((child) => [child.account_id, child.reception_count]),
    );
    expect(counts).toEqual({ [first.session.accountId]: 2, [second.session.accountId]: 3 });
    expect(usage.removed_sub_accounts.reception_count).toBe(0);
    expect(usage.allocation_method).toBe('proportional');
    const start = new Date(usage.billing_period.start);
    expect(start.getUTCDate()).toBe(1);
    expect(Date.parse(usage.billing_period.end)).toBeGreaterThan(Date.now());
  });

  it('refuses the report to the key of a child', async () => {
    const child = await provisionChild(parent);
    expectError(await child.session.api.get(child.session.path('/sub-accounts/usage')), 403);
  });

  it('stops the N+1th message of a child with a credit of 5 under 20 concurrent senders', async () => {
    const child = await provisionChild(parent, 5);

    const responses = await Promise.all(
      Array.from({ length: 20 }, () => sendOne(child.session, child.from)),
    );

    const entries = responses.flatMap((response) => {
      expect(response.status).toBe(202);
      return response.body.data;
    });
    expect(entries.filter((entry) => entry.status === 'queued')).toHaveLength(5);
    const refused = entries.filter((entry) => entry.status === 'error');
    expect(refused).toHaveLength(15);
    expect(new Set(refused.map((entry) => entry.error))).toEqual(
      new Set(['monthly credit of 5 messages used up for this period']),
    );
  });
});
