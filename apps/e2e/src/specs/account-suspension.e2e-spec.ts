import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';

import type {
  AccountStatusRecord,
  CreatedApiKeyRecord,
  SubAccountRecord,
} from '@envoi/contracts-accounts';
import { type CreateMessageResult, MessagesSubjects } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  rpc,
} from '../support/account-session';
import { type ApiResponse, KeyClient } from '../support/api-client';
import { createVerifiedDomain } from '../support/domains';
import { e2eEnvironment } from '../support/environment';
import { expectError } from '../support/expect-error';
import { receiptsFor } from '../support/smtp-receipts';

const ADMIN = path.resolve(__dirname, '../../../../dist/tools/admin/main.js');
const SUSPENDED = 'Account is suspended';
/** How far ahead the held messages are scheduled: enough to suspend their account first. */
const SCHEDULE_AHEAD_MS = 6_000;
/** How long past their time the held messages are watched for a delivery that must not come. */
const HOLD_MARGIN_MS = 3_000;

/** An account that sends: its key, its id and the path of its own routes. */
type Sender = Pick<AccountSession, 'accountId' | 'api' | 'path'>;

interface ScheduledSend {
  sender: Sender;
  id: string;
  to: string;
  firstAttempt: number;
}

/** `node dist/tools/admin/main.js …` against the e2e platform's NATS, as an operator runs it. */
function admin(args: string[]): Promise<string> {
  const env = { ...process.env, NATS_URL: e2eEnvironment().natsUrl };
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [ADMIN, ...args],
      { env, timeout: 30_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

async function operator(
  command: 'suspend' | 'unsuspend',
  accountId: string,
): Promise<AccountStatusRecord> {
  const reason = command === 'suspend' ? ['--reason', 'abuse report'] : [];
  const stdout = await admin(['accounts', command, accountId, ...reason, '--json']);
  return JSON.parse(stdout) as AccountStatusRecord;
}

async function createSubAccount(parent: AccountSession): Promise<SubAccountRecord> {
  const response = await parent.api.post<SubAccountRecord>(parent.path('/sub-accounts'), {
    name: `child-${randomUUID().slice(0, 8)}`,
    website: 'child.example.com',
  });
  expect(response.status).toBe(201);
  return response.body;
}

/** A sub-account with a key of its own, issued through the parent's sub-account key routes. */
async function createSubAccountSender(parent: AccountSession): Promise<Sender> {
  const child = await createSubAccount(parent);
  const key = await parent.api.post<CreatedApiKeyRecord>(
    parent.path(`/sub-accounts/${child.id}/api-keys`),
    {
      label: 'child',
      scopes: ['accounts:read', 'domains:read', 'domains:write', 'messages:send:all'],
    },
  );
  expect(key.status).toBe(201);
  return {
    accountId: child.id,
    api: new KeyClient(key.body.secret_key),
    path: (suffix = '') => `/v2/accounts/${child.id}${suffix}`,
  };
}

function ownAccount(sender: Sender): Promise<ApiResponse> {
  return sender.api.get(sender.path());
}

/** Polls (bounded) until the sender's key gets `status` on its own account. */
function waitForKeyStatus(sender: Sender, status: number): Promise<ApiResponse> {
  return pollUntil(
    () => ownAccount(sender),
    (response) => response.status === status,
    { timeoutMs: 10_000, what: `the key of ${sender.accountId} to get ${status}` },
  );
}

/** The message as the operator reads it (over the bus: its account's keys may be refused). */
function messageOf(sent: ScheduledSend) {
  return rpc().then((client) =>
    client.request(MessagesSubjects.getMessage, {
      account_id: sent.sender.accountId,
      message_id: sent.id,
    }),
  );
}

async function sendScheduled(sender: Sender, domain: string): Promise<ScheduledSend> {
  const to = `held-${randomUUID().slice(0, 8)}@example.net`;
  const firstAttempt = Date.now() + SCHEDULE_AHEAD_MS;
  const response = await sender.api.post<CreateMessageResult>(sender.path('/messages'), {
    from: { email: `app@${domain}` },
    recipients: [{ email: to }],
    subject: 'Held while suspended',
    text_content: 'Hello from Envoi',
    schedule: { first_attempt: new Date(firstAttempt).toISOString() },
  });
  expect(response.status).toBe(202);
  return { sender, id: response.body.data[0]?.id ?? '', to, firstAttempt };
}

/**
 * Watches the messages until `until`: none may reach the recipients' MX, be attempted or change
 * status. Stops early (and fails) at the first sign of one.
 */
async function expectHeldUntil(sends: ScheduledSend[], until: number): Promise<void> {
  const observe = () =>
    Promise.all(
      sends.map(async (sent) => {
        const record = await messageOf(sent);
        const received = receiptsFor(sent.to).length;
        return { status: record.status, attempts: record.num_attempts, received };
      }),
    );
  const held = { status: 'Scheduled', attempts: 0, received: 0 };
  const observed = await pollUntil(
    observe,
    (states) =>
      Date.now() >= until ||
      states.some((state) => state.status !== held.status || state.received > 0),
    { timeoutMs: until - Date.now() + 10_000, intervalMs: 250, what: 'the held messages' },
  );
  expect(observed).toEqual(sends.map(() => held));
}

/**
 * Issue 14 "States", end to end: the operator's suspension of an account (admin CLI) cascades to
 * its sub-accounts, refuses their keys and holds their accepted mail; unsuspension restores each
 * account's own status and the held mail goes out.
 */
describe('operator suspension (issue 14)', () => {
  afterAll(() => closeSessions());

  it('holds the mail of a suspended account and of its sub-accounts until it is unsuspended', async () => {
    const parent = await createAccountSession();
    const child = await createSubAccountSender(parent);
    const parentDomain = (await createVerifiedDomain(parent)).domain;
    const childDomain = (await createVerifiedDomain(child)).domain;

    const sends = [
      await sendScheduled(child, childDomain),
      await sendScheduled(parent, parentDomain),
    ];
    // Both keys verified (and cached by the gateway) before the suspension.
    for (const sender of [parent, child]) expect((await ownAccount(sender)).status).toBe(200);

    const suspended = await operator('suspend', parent.accountId);
    expect(suspended).toEqual({
      account_id: parent.accountId,
      status: 'suspended',
      sub_accounts: [{ account_id: child.accountId, status: 'parent-suspended' }],
    });
    // The suspension must land before the messages' time, or the test proves nothing.
    expect(Date.now()).toBeLessThan(Math.min(...sends.map((sent) => sent.firstAttempt)));

    for (const sender of [parent, child]) {
      expectError(await waitForKeyStatus(sender, 401), 401, SUSPENDED);
    }
    const latest = Math.max(...sends.map((sent) => sent.firstAttempt));
    await expectHeldUntil(sends, latest + HOLD_MARGIN_MS);

    const unsuspendedAt = Date.now();
    const unsuspended = await operator('unsuspend', parent.accountId);
    expect(unsuspended).toEqual({
      account_id: parent.accountId,
      status: 'active',
      sub_accounts: [{ account_id: child.accountId, status: 'active' }],
    });
    for (const sender of [parent, child]) await waitForKeyStatus(sender, 200);
    const read = await parent.api.get<SubAccountRecord>(
      parent.path(`/sub-accounts/${child.accountId}`),
    );
    expect(read.body.status).toBe('active');

    for (const sent of sends) {
      const delivered = await pollUntil(
        () => messageOf(sent),
        (record) => record.status === 'Delivered',
        { timeoutMs: 20_000, what: `message ${sent.id} to be delivered` },
      );
      expect(delivered.delivery_attempts.map((attempt) => attempt.status)).toEqual(['Delivered']);
      const attemptedAt = new Date(delivered.delivery_attempts[0]?.time ?? 0).getTime();
      expect(attemptedAt).toBeGreaterThanOrEqual(unsuspendedAt);
      expect(receiptsFor(sent.to)).toHaveLength(1);
    }
  });

  it('keeps a sub-account suspended by its parent suspended when the operator unsuspends the parent', async () => {
    const parent = await createAccountSession();
    const child = await createSubAccount(parent);
    const childPath = parent.path(`/sub-accounts/${child.id}`);
    const own = await parent.api.post<SubAccountRecord>(`${childPath}/suspend`, {
      reason: 'unpaid invoices',
    });
    expect(own.body.status).toBe('suspended');

    // The later suspension decides while both hold.
    const suspended = await operator('suspend', parent.accountId);
    expect(suspended.sub_accounts).toEqual([{ account_id: child.id, status: 'parent-suspended' }]);

    const unsuspended = await operator('unsuspend', parent.accountId);
    expect(unsuspended).toEqual({
      account_id: parent.accountId,
      status: 'active',
      sub_accounts: [{ account_id: child.id, status: 'suspended' }],
    });
    const read = await pollUntil(
      () => parent.api.get<SubAccountRecord>(childPath),
      (response) => response.status === 200,
      { timeoutMs: 10_000, what: 'the parent key to work again' },
    );
    expect(read.body).toEqual({ ...child, status: 'suspended' });
  });
});
