import { randomUUID } from 'node:crypto';

import type { DomainRecord } from '@envoi/contracts-domains';
import type { CreateMessageResult, MessageRecord } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';
import { Client } from 'pg';

import type { AccountSession } from '../support/account-session';
import { createVerifiedDomain } from '../support/domains';
import { OutagePlatform } from '../support/outage-platform';
import { receiptsFor } from '../support/smtp-receipts';

/** The gateway gives up on a send after this long (503), on this spec's platform. */
const RPC_TIMEOUT_MS = 3_000;

/** The fingerprint of the row the spec holds: no request's (theirs are SHA-256 hex). */
const PLACEHOLDER_FINGERPRINT = '0'.repeat(64);

interface AcceptedRequestRow {
  reply: CreateMessageResult;
}

/**
 * Issue 13's first fault, on a platform of its own: the messages service commits a send but its
 * reply never reaches the gateway, which answers 503 and releases the `Idempotency-Key`; the
 * service is then killed (SIGKILL) and started again. The client's retry with the same key must
 * answer 202 with the ids of the committed send, and the message go out exactly once.
 *
 * The window is held open without test code in the service: the spec holds the key's row in an
 * open transaction, so the send's commit waits on it past the gateway's RPC timeout; rolling it
 * back lets the send commit, with nobody left to read its reply.
 */
describe('kill -9 of messages between its commit and its reply (issue 13)', () => {
  let outage: OutagePlatform | undefined;
  let session: AccountSession;
  let domain: DomainRecord;
  let database: Client | undefined;

  beforeAll(async () => {
    outage = await OutagePlatform.start({ RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS) });
    session = await outage.createAccountSession(`e2e-crash-${randomUUID().slice(0, 8)}`);
    domain = await createVerifiedDomain(session);
    database = new Client({ connectionString: outage.platform.databaseUrl });
    await database.connect();
  }, 180_000);

  afterAll(async () => {
    await database?.end();
    await outage?.stop();
  }, 120_000);

  const platform = (): OutagePlatform => {
    if (!outage) throw new Error('the outage platform did not start');
    return outage;
  };

  const db = (): Client => {
    if (!database) throw new Error('no database connection');
    return database;
  };

  async function acceptedRequest(key: string): Promise<AcceptedRequestRow | undefined> {
    const result = await db().query<AcceptedRequestRow>(
      `SELECT reply FROM messages.accepted_requests
        WHERE account_id = $1 AND idempotency_key = $2 AND request_fingerprint <> $3`,
      [session.accountId, key, PLACEHOLDER_FINGERPRINT],
    );
    return result.rows[0];
  }

  async function messageIdsTo(recipient: string): Promise<string[]> {
    const result = await db().query<{ message_id_header: string }>(
      `SELECT message_id_header FROM messages.messages WHERE account_id = $1 AND recipient = $2`,
      [session.accountId, recipient],
    );
    return result.rows.map((row) => row.message_id_header);
  }

  async function status(id: string): Promise<string> {
    const response = await session.api.get<MessageRecord>(
      session.path(`/messages/${encodeURIComponent(id)}`),
    );
    return response.status === 200 ? response.body.status : `HTTP ${response.status}`;
  }

  it('answers the retry with the committed send: same ids, one message delivered once', async () => {
    const key = `crash-${randomUUID()}`;
    const to = `crash-${randomUUID().slice(0, 8)}@example.net`;
    const body = {
      from: { email: `app@${domain.domain}` },
      recipients: [{ email: to }],
      subject: 'Committed once',
      text_content: 'Hello through a crash',
    };
    const withKey = { headers: { 'idempotency-key': key } };

    // Another transaction holds the key: the send's commit waits for it.
    const holder = new Client({ connectionString: platform().platform.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(
        `INSERT INTO messages.accepted_requests
           (account_id, idempotency_key, request_fingerprint, reply) VALUES ($1, $2, $3, '{}')`,
        [session.accountId, key, PLACEHOLDER_FINGERPRINT],
      );
      const first = session.api.post<CreateMessageResult>(session.path('/messages'), body, withKey);
      await pollUntil(
        () =>
          db().query(
            `SELECT 1 FROM pg_stat_activity
              WHERE wait_event_type = 'Lock'
                AND query LIKE '%INSERT INTO messages.accepted_requests (account_id%'`,
          ),
        (result) => result.rowCount === 1,
        { timeoutMs: 20_000, intervalMs: 50, what: 'the send to wait on the held key' },
      );
      const refused = await first;
      expect(refused.status).toBe(503);
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
    }

    const committed = await pollUntil(
      () => acceptedRequest(key),
      (row) => row !== undefined,
      { timeoutMs: 20_000, what: 'the send to commit after the gateway gave up' },
    );
    const committedIds = committed?.reply.data.map((entry) => entry.id) ?? [];
    expect(committedIds).toHaveLength(1);

    await platform().killService('messages');
    await platform().startServiceAgain('messages');

    const retried = await session.api.post<CreateMessageResult>(
      session.path('/messages'),
      body,
      withKey,
    );
    expect(retried.status).toBe(202);
    expect(retried.body.data.map((entry) => entry.id)).toEqual(committedIds);
    expect(retried.body.data[0]?.status).toBe('queued');
    expect(await messageIdsTo(to)).toEqual(committedIds);

    const id = committedIds[0] ?? '';
    await pollUntil(
      () => status(id),
      (current) => current === 'Delivered',
      { timeoutMs: 60_000, intervalMs: 200, what: `${to} to be Delivered` },
    );
    expect(receiptsFor(to)).toHaveLength(1);
    expect(await messageIdsTo(to)).toEqual(committedIds);
  }, 180_000);
});
