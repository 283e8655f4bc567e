import { randomUUID } from 'node:crypto';

import type { DomainRecord } from '@envoi/contracts-domains';
import type { CreateMessageResult, MessageRecord } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { dkimResults } from '../support/dkim';
import { createVerifiedDomain } from '../support/domains';
import { receiptsFor } from '../support/smtp-receipts';

/**
 * Issue 6 end to end: accepted mail goes out through the delivery workers to the recipients' MX
 * (example.net → an smtp-server sink on loopback, found through the platform's DNS), DKIM-signed,
 * with a VERP envelope sender; statuses and attempts come back through the delivery events.
 */
describe('delivery (issue 6)', () => {
  let session: AccountSession;
  let domain: DomainRecord;

  beforeAll(async () => {
    session = await createAccountSession();
    domain = await createVerifiedDomain(session);
  });

  afterAll(async () => {
    await closeSessions();
  });

  function recipient(prefix = 'r'): string {
    return `${prefix}-${randomUUID().slice(0, 8)}@example.net`;
  }

  async function send(to: string, extra: Record<string, unknown> = {}): Promise<string> {
    const response = await session.api.post<CreateMessageResult>(session.path('/messages'), {
      from: { email: `app@${domain.domain}`, name: 'App' },
      recipients: [{ email: to }],
      subject: 'Delivery test',
      text_content: 'Hello from Envoi',
      ...extra,
    });
    expect(response.status).toBe(202);
    return response.body.data[0]?.id ?? '';
  }

  async function message(id: string): Promise<MessageRecord> {
    const response = await session.api.get<MessageRecord>(
      session.path(`/messages/${encodeURIComponent(id)}`),
    );
    return response.body;
  }

  function waitForStatus(id: string, status: string, timeoutMs = 20_000): Promise<MessageRecord> {
    return pollUntil(
      () => message(id),
      (record) => record.status === status,
      { timeoutMs, what: `message ${id} to become ${status}` },
    );
  }

  it('delivers once over SMTP, DKIM-signed, from a per-message bounce address', async () => {
    const to = recipient();
    const id = await send(to);

    const delivered = await waitForStatus(id, 'Delivered');
    expect(delivered.delivered_at).not.toBeNull();
    expect(delivered.num_attempts).toBe(1);
    expect(delivered.delivery_attempts.map((attempt) => attempt.status)).toEqual(['Delivered']);

    const receipts = receiptsFor(to);
    expect(receipts).toHaveLength(1);
    const [receipt] = receipts;
    // Long header values are folded onto the next line.
    expect(receipt?.raw).toMatch(new RegExp(`Message-ID:\\s+${id.replace(/[.]/g, '\\.')}`, 'i'));
    expect(receipt?.raw).toMatch(new RegExp(`DKIM-Signature:[^]*d=${domain.domain}`));
    expect(receipt?.mailFrom).toMatch(/^bounce\+[0-9a-f-]{36}@/);
    expect(receipt?.secure).toBe(true);

    expect(await dkimResults(receipt?.raw ?? '')).toEqual([[domain.domain, 'pass']]);
  });

  it('retries a deferral and then delivers', async () => {
    const to = recipient('defer1');
    const id = await send(to);

    const delivered = await waitForStatus(id, 'Delivered');
    expect(delivered.delivery_attempts.map((attempt) => attempt.status)).toEqual([
      'Deferred',
      'Delivered',
    ]);
    expect(receiptsFor(to)).toHaveLength(1);
  });

  it('bounces a 5xx as hard and suppresses the address for later sends', async () => {
    const to = recipient('reject');
    const id = await send(to);

    const bounced = await waitForStatus(id, 'Bounced');
    expect(bounced.bounce_classification).toBe('hard');

    await pollUntil(
      () =>
        session.api.get<{ data: { email: string }[] }>(
          session.path(`/suppressions?email=${encodeURIComponent(to)}`),
        ),
      (response) => response.body.data.some((entry) => entry.email === to),
      { timeoutMs: 10_000, what: 'the automatic suppression' },
    );
    const again = await session.api.post<CreateMessageResult>(session.path('/messages'), {
      from: { email: `app@${domain.domain}` },
      recipients: [{ email: to }],
      subject: 'Again',
      text_content: 'Hello again',
    });
    expect(again.body.data[0]).toMatchObject({ status: 'error', id: null });
  });

  it('settles each recipient of a conversation message on its own: delivers, bounces, retries', async () => {
    const to = recipient('to');
    const cc = recipient('reject');
    const bcc = recipient('defer1');
    const response = await session.api.post<CreateMessageResult>(
      session.path('/messages/conversation'),
      {
        from: { email: `app@${domain.domain}` },
        to: [{ email: to }],
        cc: [{ email: cc }],
        bcc: [{ email: bcc }],
        subject: 'Conversation delivery',
        text_content: 'Hello, all of you',
      },
    );
    expect(response.status).toBe(202);
    const id = response.body.data[0]?.id ?? '';

    // Attempt 1: `to` accepts, `cc` refuses for good, `bcc` defers; attempt 2 is for bcc only.
    const delivered = await waitForStatus(id, 'Delivered');
    expect(delivered.delivery_attempts.map((attempt) => attempt.status)).toEqual([
      'Deferred',
      'Delivered',
    ]);
    expect(delivered.delivery_attempts[0]?.log).toContain(`${cc}: 550 5.1.1`);
    expect([to, cc, bcc].map((address) => receiptsFor(address).length)).toEqual([1, 0, 1]);

    // The hard bounce suppresses the cc address, and only it.
    const suppressed = await pollUntil(
      () =>
        session.api.get<{ data: { email: string }[] }>(
          session.path(`/suppressions?email=${encodeURIComponent(cc)}`),
        ),
      (found) => found.body.data.length > 0,
      { timeoutMs: 10_000, what: 'the automatic suppression of the cc address' },
    );
    expect(suppressed.body.data.map((entry) => entry.email)).toEqual([cc]);
    for (const address of [to, bcc]) {
      const none = await session.api.get<{ data: unknown[] }>(
        session.path(`/suppressions?email=${encodeURIComponent(address)}`),
      );
      expect(none.body.data).toEqual([]);
    }
  });

  it('runs the pipeline for sandbox messages without delivering them', async () => {
    const to = recipient('sandbox');
    const id = await send(to, { sandbox: true, sandbox_result: 'bounce' });

    await waitForStatus(id, 'Sandbox Bounced');
    const defaulted = await send(to, { sandbox: true });
    await waitForStatus(defaulted, 'Sandbox Delivered');
    expect(receiptsFor(to)).toHaveLength(0);
  });

  it('holds a scheduled message until its first attempt, and never sends a cancelled one', async () => {
    const soon = new Date(Date.now() + 3_000).toISOString();
    const scheduledTo = recipient('scheduled');
    const cancelledTo = recipient('cancelled');
    const scheduled = await send(scheduledTo, { schedule: { first_attempt: soon } });
    const cancelled = await send(cancelledTo, { schedule: { first_attempt: soon } });
    expect((await message(scheduled)).status).toBe('Scheduled');

    const cancel = await session.api.delete(
      session.path(`/messages/${encodeURIComponent(cancelled)}/cancel`),
    );
    expect(cancel.status).toBe(200);

    const delivered = await waitForStatus(scheduled, 'Delivered');
    expect(new Date(delivered.delivered_at ?? 0).getTime()).toBeGreaterThanOrEqual(
      new Date(soon).getTime(),
    );
    expect((await message(cancelled)).status).toBe('Cancelled');
    expect(receiptsFor(cancelledTo)).toHaveLength(0);
  });

  it('delivers a send’s recipients from their one job, never the one cancelled', async () => {
    const soon = new Date(Date.now() + 3_000).toISOString();
    const recipients = [1, 2, 3, 4].map((n) => recipient(`chunk${n}`));
    const response = await session.api.post<CreateMessageResult>(session.path('/messages'), {
      from: { email: `app@${domain.domain}`, name: 'App' },
      recipients: recipients.map((email) => ({ email })),
      subject: 'Chunk test',
      text_content: 'Hello from Envoi',
      schedule: { first_attempt: soon },
    });
    expect(response.status).toBe(202);
    const ids = response.body.data.map((entry) => entry.id ?? '');
    const cancelledId = ids[1] ?? '';

    const cancel = await session.api.delete(
      session.path(`/messages/${encodeURIComponent(cancelledId)}/cancel`),
    );
    expect(cancel.status).toBe(200);

    for (const id of ids.filter((id) => id !== cancelledId)) {
      await waitForStatus(id, 'Delivered');
    }
    expect((await message(cancelledId)).status).toBe('Cancelled');
    expect(recipients.map((to) => receiptsFor(to).length)).toEqual([1, 0, 1, 1]);
  });
});
