import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

import type { CreatedSmtpCredentialRecord } from '@envoi/contracts-accounts';
import type { DomainRecord } from '@envoi/contracts-domains';
import type { MessageSummaryRecord } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';
import nodemailer from 'nodemailer';

import type { AccountSession } from '../support/account-session';
import { createVerifiedDomain } from '../support/domains';
import { e2eEnvironment } from '../support/environment';
import { OutagePlatform } from '../support/outage-platform';
import { receiptsFor } from '../support/smtp-receipts';

/** Messages of one burst, submitted by a few clients side by side. */
const BURST = 24;
const CLIENTS = 4;
/** The process is killed once this many messages of the burst got their 250. */
const KILL_AFTER_ACCEPTED = 6;
/** How long one message may take, retries included (the restart is within it). */
const MESSAGE_TIMEOUT_MS = 90_000;
const CLIENT_TIMEOUT_MS = 30_000;

/** What one attempt to submit a message came to. */
type Outcome =
  | { kind: 'accepted' }
  /** No connection at all. */
  | { kind: 'not taken'; reply: string }
  /** A 4xx after DATA or a connection lost mid-transaction: stored or not, the client cannot tell. */
  | { kind: 'unknown'; reply: string };

interface Submitted {
  to: string;
  messageIdHeader: string;
  outcomes: Outcome[];
}

interface SmtpClientError {
  responseCode?: number;
  command?: string;
  message: string;
}

/**
 * Issue 16, "250 only after the message is committed": a burst submitted over SMTP while the smtp
 * process (then the messages service) is killed with SIGKILL and started again, the clients
 * retrying what got no 250. Every message that got a 250 is stored and delivered, and each copy
 * beyond the first is accounted for by an attempt whose reply the client never got; nothing is
 * lost and nothing is half-stored.
 */
describe('SMTP submission through crashes (issue 16)', () => {
  let outage: OutagePlatform | undefined;
  let session: AccountSession;
  let domain: DomainRecord;
  let login: CreatedSmtpCredentialRecord;

  beforeAll(async () => {
    outage = await OutagePlatform.start({ RPC_TIMEOUT_MS: '2000' });
    session = await outage.createAccountSession(`e2e-smtp-crash-${randomUUID().slice(0, 8)}`);
    domain = await createVerifiedDomain(session);
    const created = await session.api.post<CreatedSmtpCredentialRecord>(
      session.path('/smtp-credentials'),
      { name: 'crash', scope: 'global' },
    );
    expect(created.status).toBe(201);
    login = created.body;
  }, 180_000);

  afterAll(async () => {
    await outage?.stop();
  }, 120_000);

  const platform = (): OutagePlatform => {
    if (!outage) throw new Error('the outage platform did not start');
    return outage;
  };

  async function attempt(message: Submitted): Promise<Outcome> {
    const { host, port } = platform().platform.smtpSubmission;
    const transport = nodemailer.createTransport({
      host,
      port,
      secure: false,
      requireTLS: true,
      auth: { user: login.username, pass: login.password },
      tls: { ca: readFileSync(e2eEnvironment().caFile), servername: 'localhost' },
      connectionTimeout: CLIENT_TIMEOUT_MS,
      greetingTimeout: CLIENT_TIMEOUT_MS,
      socketTimeout: CLIENT_TIMEOUT_MS,
    });
    const raw = [
      `From: <app@${domain.domain}>`,
      `To: <${message.to}>`,
      `Message-ID: ${message.messageIdHeader}`,
      'Subject: through a crash',
      '',
      'Hello through a crash.',
      '',
    ].join('\r\n');
    try {
      const info = await transport.sendMail({
        envelope: { from: `app@${domain.domain}`, to: [message.to] },
        raw,
      });
      return info.response.startsWith('250')
        ? { kind: 'accepted' }
        : { kind: 'unknown', reply: info.response };
    } catch (error) {
      const failure = error as SmtpClientError;
      const reply = `${failure.command ?? '?'}: ${failure.message}`;
      if (failure.responseCode !== undefined && failure.responseCode >= 500) {
        throw new Error(`refused for good: ${reply}`);
      }
      // Only a refused connection surely carried nothing; a connection lost later may have.
      return /ECONNREFUSED/.test(failure.message)
        ? { kind: 'not taken', reply }
        : { kind: 'unknown', reply };
    } finally {
      transport.close();
    }
  }

  /** Submits until a 250, every outcome recorded. */
  async function submit(message: Submitted): Promise<void> {
    await pollUntil(
      async () => {
        const outcome = await attempt(message);
        message.outcomes.push(outcome);
        return outcome;
      },
      (outcome) => outcome.kind === 'accepted',
      { timeoutMs: MESSAGE_TIMEOUT_MS, what: `a 250 for ${message.to}` },
    );
  }

  /** The burst, `CLIENTS` at a time; `crash` runs beside it. */
  async function burst(tag: string, crash: (accepted: () => number) => Promise<void>) {
    const runId = randomUUID().slice(0, 8);
    const messages: Submitted[] = Array.from({ length: BURST }, (_, index) => ({
      to: `crash-${tag}-${index}-${runId}@example.net`,
      messageIdHeader: `<crash-${tag}-${index}-${runId}@${domain.domain}>`,
      outcomes: [],
    }));
    let next = 0;
    const client = async () => {
      for (let message = messages[next++]; message; message = messages[next++]) {
        await submit(message);
      }
    };
    const accepted = () =>
      messages.filter((message) => message.outcomes.some((outcome) => outcome.kind === 'accepted'))
        .length;
    await Promise.all([...Array.from({ length: CLIENTS }, client), crash(accepted)]);
    return messages;
  }

  /** Each message's copies: listed by its Message-ID, delivered, and one receipt per copy. */
  async function expectStoredOnceUnlessUnanswered(messages: Submitted[]): Promise<void> {
    let duplicates = 0;
    let unanswered = 0;
    for (const message of messages) {
      const query = `/messages?message_id_header=${encodeURIComponent(message.messageIdHeader)}`;
      const copies = await pollUntil(
        async () =>
          (await session.api.get<{ data: MessageSummaryRecord[] }>(session.path(query))).body.data,
        (listed) => listed.length > 0 && listed.every((copy) => copy.status === 'Delivered'),
        { timeoutMs: 60_000, what: `${message.messageIdHeader} stored and delivered` },
      );
      const unknown = message.outcomes.filter((outcome) => outcome.kind === 'unknown').length;
      expect(copies.length).toBeLessThanOrEqual(1 + unknown);
      const receipts = await pollUntil(
        () => receiptsFor(message.to),
        (found) => found.length >= copies.length,
        { timeoutMs: 30_000, what: `${copies.length} receipts for ${message.to}` },
      );
      expect(receipts).toHaveLength(copies.length);
      duplicates += copies.length - 1;
      unanswered += unknown;
    }
    // Lost: none (every message listed); duplicates only where a reply never came.
    expect(duplicates).toBeLessThanOrEqual(unanswered);
    console.log(
      `${messages.length} messages: ${duplicates} duplicates, ${unanswered} attempts unanswered`,
    );
  }

  it('smtp killed with SIGKILL mid-burst, then started: every 250 stored and delivered, duplicates only where the 250 was lost', async () => {
    let acceptedAtKill = 0;
    const messages = await burst('smtp', async (accepted) => {
      await pollUntil(
        () => accepted(),
        (count) => count >= KILL_AFTER_ACCEPTED,
        {
          timeoutMs: 60_000,
          what: `${KILL_AFTER_ACCEPTED} messages accepted`,
        },
      );
      acceptedAtKill = accepted();
      await platform().killService('smtp');
      await platform().startServiceAgain('smtp');
    });

    expect(acceptedAtKill).toBeLessThan(BURST);
    const retried = messages.filter((message) => message.outcomes.length > 1);
    expect(retried.length).toBeGreaterThan(0);
    await expectStoredOnceUnlessUnanswered(messages);
  });

  it('messages killed with SIGKILL during submissions: the edge answers 451, the retry succeeds, nothing half-stored', async () => {
    const probe: Submitted = {
      to: `crash-probe-${randomUUID().slice(0, 8)}@example.net`,
      messageIdHeader: `<crash-probe-${randomUUID()}@${domain.domain}>`,
      outcomes: [],
    };
    const burstMessages = await burst('messages', async (accepted) => {
      await pollUntil(
        () => accepted(),
        (count) => count >= KILL_AFTER_ACCEPTED,
        {
          timeoutMs: 60_000,
          what: `${KILL_AFTER_ACCEPTED} messages accepted`,
        },
      );
      await platform().killService('messages');
      const refused = await attempt(probe);
      probe.outcomes.push(refused);
      expect(refused.kind).toBe('unknown');
      expect(refused.kind === 'unknown' ? refused.reply : '').toMatch(/451 4\.3\.0/);
      await platform().startServiceAgain('messages');
      await submit(probe);
    });
    const messages = [...burstMessages, probe];

    const temporaryReplies = messages.flatMap((message) =>
      message.outcomes.filter((outcome) => outcome.kind === 'unknown' && /451/.test(outcome.reply)),
    );
    expect(temporaryReplies.length).toBeGreaterThan(0);
    await expectStoredOnceUnlessUnanswered(messages);
  });
});
