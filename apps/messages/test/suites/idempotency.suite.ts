import { createHash, randomUUID } from 'node:crypto';

import {
  type CreateConversationBody,
  type CreateMessageBody,
  type CreateMessageResult,
  MessagesErrorCode,
  MessagesSubjects,
} from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import { AcceptedRequests } from '../../src/accepted-requests/accepted-requests.service';
import { messageBody, type MessagesTestApp, newSender, type Sender } from '../messages-test-app';

const HOUR_MS = 3_600_000;

function fingerprintOf(body: object): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

interface Keyed {
  key: string;
  fingerprint: string;
}

function sendKeyed(
  app: MessagesTestApp,
  sender: Sender,
  body: CreateMessageBody,
  idempotency: Keyed,
): Promise<CreateMessageResult> {
  return app.rpc.request(MessagesSubjects.createMessage, {
    account_id: sender.accountId,
    api: 'v2',
    body,
    idempotency,
  });
}

/** How many messages of the account went to this recipient. */
async function messagesTo(
  app: MessagesTestApp,
  sender: Sender,
  recipient: string,
): Promise<number> {
  const rows = await app.dataSource.query<Array<{ count: number }>>(
    `SELECT count(*)::int AS count FROM messages.messages WHERE account_id = $1 AND recipient = $2`,
    [sender.accountId, recipient],
  );
  return rows[0]?.count ?? 0;
}

async function recordsOf(app: MessagesTestApp, sender: Sender, key: string): Promise<number> {
  const rows = await app.dataSource.query<Array<{ count: number }>>(
    `SELECT count(*)::int AS count FROM messages.accepted_requests
      WHERE account_id = $1 AND idempotency_key = $2`,
    [sender.accountId, key],
  );
  return rows[0]?.count ?? 0;
}

function recipientOf(body: CreateMessageBody): string {
  const email = body.recipients[0]?.email;
  if (email === undefined) throw new Error('a body without recipient');
  return email;
}

export function idempotencySuite(getApp: () => MessagesTestApp): void {
  describe('messages service: sends committed once per idempotency key', () => {
    let app: MessagesTestApp;

    beforeAll(() => {
      app = getApp();
    });

    it('answers a re-executed send with the committed reply and creates nothing', async () => {
      const sender = await newSender(app);
      const body = messageBody(sender);
      const keyed = { key: `order-${randomUUID()}`, fingerprint: fingerprintOf(body) };

      const first = await sendKeyed(app, sender, body, keyed);
      const again = await sendKeyed(app, sender, body, keyed);

      expect(first.data[0]?.status).toBe('queued');
      expect(again).toEqual(first);
      expect(await messagesTo(app, sender, recipientOf(body))).toBe(1);
      expect(await recordsOf(app, sender, keyed.key)).toBe(1);
    });

    it('answers a re-executed conversation with the committed reply', async () => {
      const sender = await newSender(app);
      const to = `conversation-${randomUUID().slice(0, 8)}@recipient.test`;
      const body: CreateConversationBody = {
        from: { email: sender.from },
        to: [{ email: to }],
        subject: 'Hello',
        text_content: 'Hello there',
      };
      const request = {
        account_id: sender.accountId,
        api: 'v2' as const,
        body,
        idempotency: { key: 'conversation-1', fingerprint: fingerprintOf(body) },
      };

      const first = await app.rpc.request(MessagesSubjects.createConversation, request);
      const again = await app.rpc.request(MessagesSubjects.createConversation, request);

      expect(again).toEqual(first);
      expect(await messagesTo(app, sender, to)).toBe(1);
    });

    it('refuses the key with another request (422 at the gateway) and creates nothing', async () => {
      const sender = await newSender(app);
      const body = messageBody(sender);
      const key = `order-${randomUUID()}`;
      await sendKeyed(app, sender, body, { key, fingerprint: fingerprintOf(body) });
      const other = messageBody(sender);

      await expect(
        sendKeyed(app, sender, other, { key, fingerprint: fingerprintOf(other) }),
      ).rejects.toMatchObject({
        code: MessagesErrorCode.IdempotencyKeyReused,
        message: 'idempotency key was already used with a different request payload',
      });
      expect(await messagesTo(app, sender, recipientOf(other))).toBe(0);
    });

    it('keeps keys apart per account', async () => {
      const [one, two] = [await newSender(app), await newSender(app)];
      const key = `shared-${randomUUID()}`;
      const bodyOne = messageBody(one);
      const bodyTwo = messageBody(two);

      await sendKeyed(app, one, bodyOne, { key, fingerprint: fingerprintOf(bodyOne) });
      await sendKeyed(app, two, bodyTwo, { key, fingerprint: fingerprintOf(bodyTwo) });

      expect(await messagesTo(app, two, recipientOf(bodyTwo))).toBe(1);
    });

    it('a duplicate racing the first commit waits for it, rolls back and answers its reply', async () => {
      const sender = await newSender(app);
      const body = messageBody(sender);
      const keyed = { key: `race-${randomUUID()}`, fingerprint: fingerprintOf(body) };
      const winnerReply: CreateMessageResult = {
        object: 'list',
        data: [
          {
            object: 'message',
            id: `<${randomUUID()}@${sender.domain.domain}>`,
            recipient: { email: recipientOf(body), name: 'Recipient' },
            status: 'queued',
            error: null,
          },
        ],
      };
      // The winner: a transaction that has recorded the key and not committed yet.
      const winner = app.dataSource.createQueryRunner();
      await winner.connect();
      try {
        await winner.startTransaction();
        await winner.query(
          `INSERT INTO messages.accepted_requests
             (account_id, idempotency_key, request_fingerprint, reply) VALUES ($1, $2, $3, $4)`,
          [sender.accountId, keyed.key, keyed.fingerprint, JSON.stringify(winnerReply)],
        );
        const loser = sendKeyed(app, sender, body, keyed);
        await pollUntil(
          () =>
            app.dataSource.query<unknown[]>(
              `SELECT 1 FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO messages.accepted_requests%'`,
            ),
          (waiting) => waiting.length > 0,
          { what: 'the duplicate to wait for the first commit' },
        );
        await winner.commitTransaction();

        expect(await loser).toEqual(winnerReply);
      } finally {
        if (winner.isTransactionActive) await winner.rollbackTransaction();
        await winner.release();
      }
      expect(await messagesTo(app, sender, recipientOf(body))).toBe(0);
    });

    it('sends again under a key whose window has passed, and purges such records', async () => {
      const sender = await newSender(app);
      const body = messageBody(sender);
      const keyed = { key: `old-${randomUUID()}`, fingerprint: fingerprintOf(body) };
      const stale = `<${randomUUID()}@${sender.domain.domain}>`;
      const windowMs = app.config.IDEMPOTENCY_TTL_MS;
      await app.dataSource.query(
        `INSERT INTO messages.accepted_requests
           (account_id, idempotency_key, request_fingerprint, reply, created_at)
         VALUES ($1, $2, $3, $4, now() - $5 * interval '1 millisecond')`,
        [
          sender.accountId,
          keyed.key,
          keyed.fingerprint,
          JSON.stringify({ object: 'list', data: [{ id: stale }] }),
          windowMs + HOUR_MS,
        ],
      );

      const result = await sendKeyed(app, sender, body, keyed);

      expect(result.data[0]?.id).not.toBe(stale);
      expect(await messagesTo(app, sender, recipientOf(body))).toBe(1);
      expect(await sendKeyed(app, sender, body, keyed)).toEqual(result);

      const expired = `expired-${randomUUID()}`;
      await app.dataSource.query(
        `INSERT INTO messages.accepted_requests
           (account_id, idempotency_key, request_fingerprint, reply, created_at)
         VALUES ($1, $2, $3, '{}', now() - $4 * interval '1 millisecond')`,
        [sender.accountId, expired, keyed.fingerprint, windowMs + HOUR_MS],
      );
      const purged = await app.app.get(AcceptedRequests).purgeExpired(10_000);

      expect(purged).toBeGreaterThanOrEqual(1);
      expect(await recordsOf(app, sender, expired)).toBe(0);
      expect(await recordsOf(app, sender, keyed.key)).toBe(1);
    });
  });
}
