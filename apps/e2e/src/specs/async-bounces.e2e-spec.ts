import { randomUUID } from 'node:crypto';

import type { DomainRecord } from '@envoi/contracts-domains';
import type { CreateMessageResult, MessageRecord } from '@envoi/contracts-messages';
import type { SuppressionRecord } from '@envoi/contracts-suppressions';
import { WEBHOOK_EVENT_FLAGS } from '@envoi/contracts-webhooks';
import { pollUntil } from '@envoi/shared-testing';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { createVerifiedDomain } from '../support/domains';
import { e2eEnvironment } from '../support/environment';
import { deliverToMx } from '../support/mx-client';
import { receiptsFor } from '../support/smtp-receipts';
import { CheckedWebhookReceiver } from '../support/webhook-receiver';

const EVERY_FLAG = Object.fromEntries(WEBHOOK_EVENT_FLAGS.map((flag) => [flag, true]));
const WAIT = { timeoutMs: 30_000, intervalMs: 200 };

/** A message the sink accepted: its API id and the VERP envelope sender the sink saw. */
interface DeliveredMessage {
  id: string;
  recipient: string;
  returnPath: string;
}

/** The headers of the original a report quotes: the sink's envelope sender and the Message-ID. */
function originalHeaders(message: DeliveredMessage, from: string): string[] {
  return [
    `Return-Path: <${message.returnPath}>`,
    `From: <${from}>`,
    `To: <${message.recipient}>`,
    'Subject: Async bounce test',
    `Message-ID: ${message.id}`,
  ];
}

/** An RFC 3464 DSN, as Postfix sends one, for `message` with the given status. */
function dsn(message: DeliveredMessage, from: string, status: string, diagnostic: string): string {
  return [
    'From: MAILER-DAEMON@mx.remote.example (Mail Delivery System)',
    `To: ${message.returnPath}`,
    'Subject: Undelivered Mail Returned to Sender',
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="dsn"',
    '',
    '--dsn',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    `<${message.recipient}>: host mx.remote.example said: ${diagnostic}`,
    '',
    '--dsn',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.remote.example',
    '',
    `Final-Recipient: rfc822; ${message.recipient}`,
    'Action: failed',
    `Status: ${status}`,
    'Remote-MTA: dns; mx.remote.example',
    `Diagnostic-Code: smtp; ${diagnostic}`,
    '',
    '--dsn',
    'Content-Type: text/rfc822-headers',
    '',
    ...originalHeaders(message, from),
    '',
    '--dsn--',
    '',
  ].join('\r\n');
}

/** An RFC 5965 ARF complaint about `message`, quoting it whole. */
function arf(message: DeliveredMessage, from: string, feedbackAddress: string): string {
  return [
    'From: <abuse@fbl.remote.example>',
    `To: <${feedbackAddress}>`,
    'Subject: FW: Async bounce test',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="arf"',
    '',
    '--arf',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is an email abuse report.',
    '',
    '--arf',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'User-Agent: RemoteFBL/1.0',
    'Version: 1',
    `Original-Rcpt-To: <${message.recipient}>`,
    `Original-Mail-From: <${message.returnPath}>`,
    '',
    '--arf',
    'Content-Type: message/rfc822',
    'Content-Disposition: inline',
    '',
    ...originalHeaders(message, from),
    '',
    'Hello',
    '',
    '--arf--',
    '',
  ].join('\r\n');
}

/**
 * Issue 17 end to end: mail sent through the API is accepted by the recipients' MX (the loopback
 * sink); later, as a remote MTA would, a real client delivers a DSN to the message's VERP address
 * (the envelope sender the sink saw) or an ARF report to the feedback address at the platform's
 * MX. The message becomes Bounced, a hard bounce or a complaint suppresses the recipient, and a
 * checked webhook receiver gets the events. Garbage to a bounce address changes nothing.
 */
describe('asynchronous bounces and complaints (issue 17)', () => {
  let receiver: CheckedWebhookReceiver;
  let session: AccountSession;
  let domain: DomainRecord;

  beforeAll(async () => {
    receiver = await CheckedWebhookReceiver.start();
    session = await createAccountSession();
    domain = await createVerifiedDomain(session);
    const response = await session.api.post<{ id: string; secret: string }>(
      session.path('/webhooks'),
      { name: 'async', url: receiver.url('async'), scope: 'global', ...EVERY_FLAG },
    );
    expect(response.status).toBe(201);
    receiver.serve('async', response.body);
  });

  afterAll(async () => {
    await receiver.close();
    await closeSessions();
  });

  afterEach(() => {
    expect(receiver.problems()).toEqual([]);
  });

  const sender = (): string => `app@${domain.domain}`;

  async function message(id: string): Promise<MessageRecord> {
    const response = await session.api.get<MessageRecord>(
      session.path(`/messages/${encodeURIComponent(id)}`),
    );
    expect(response.status).toBe(200);
    return response.body;
  }

  function waitForStatus(id: string, status: string): Promise<MessageRecord> {
    return pollUntil(
      () => message(id),
      (record) => record.status === status,
      { ...WAIT, what: `message ${id} to become ${status}` },
    );
  }

  async function suppressionsOf(email: string): Promise<SuppressionRecord[]> {
    const response = await session.api.get<{ data: SuppressionRecord[] }>(
      session.path(`/suppressions?email=${encodeURIComponent(email)}`),
    );
    expect(response.status).toBe(200);
    return response.body.data;
  }

  /** Sends through the API and waits until the sink took it: Delivered, with its VERP sender. */
  async function sendDelivered(): Promise<DeliveredMessage> {
    const recipient = `async-${randomUUID().slice(0, 8)}@example.net`;
    const response = await session.api.post<CreateMessageResult>(session.path('/messages'), {
      from: { email: sender() },
      recipients: [{ email: recipient }],
      subject: 'Async bounce test',
      text_content: 'Hello',
    });
    expect(response.status).toBe(202);
    const id = response.body.data[0]?.id ?? '';
    await waitForStatus(id, 'Delivered');
    const [receipt] = receiptsFor(recipient);
    const returnPath = receipt?.mailFrom ?? '';
    expect(returnPath).toMatch(/^bounce\+[0-9a-f-]{36}@/);
    return { id, recipient, returnPath };
  }

  function eventTypesFor(recipient: string): string[] {
    return receiver
      .eventsAt('async')
      .filter((call) => call.payload?.data['recipient'] === recipient)
      .map((call) => call.payload?.type ?? '?');
  }

  function waitForEvents(recipient: string, expected: string[]): Promise<string[]> {
    return pollUntil(
      () => eventTypesFor(recipient),
      (types) => expected.every((type) => types.includes(type)),
      { ...WAIT, what: `${expected.join(', ')} for ${recipient}` },
    );
  }

  it('a hard DSN after delivery (nodemailer): Bounced, a suppression, message.bounced and suppression.created', async () => {
    const sent = await sendDelivered();
    const raw = dsn(sent, sender(), '5.1.1', '550 5.1.1 <x>: Recipient address rejected');
    await deliverToMx('nodemailer', sent.returnPath, raw);

    const bounced = await waitForStatus(sent.id, 'Bounced');
    expect(bounced.delivered_at).not.toBeNull();
    const [suppression] = await pollUntil(
      () => suppressionsOf(sent.recipient),
      (found) => found.length > 0,
      { ...WAIT, what: `a suppression of ${sent.recipient}` },
    );
    expect(suppression).toMatchObject({ email: sent.recipient, domain: domain.domain });
    await waitForEvents(sent.recipient, ['message.bounced', 'suppression.created']);
  });

  it('a soft DSN after delivery (swaks): Bounced and message.bounced, no suppression', async () => {
    const sent = await sendDelivered();
    const raw = dsn(sent, sender(), '5.2.2', '552 5.2.2 <x>: Mailbox full');
    await deliverToMx('swaks', sent.returnPath, raw);

    await waitForStatus(sent.id, 'Bounced');
    await waitForEvents(sent.recipient, ['message.bounced']);
    expect(await suppressionsOf(sent.recipient)).toEqual([]);
    expect(eventTypesFor(sent.recipient)).not.toContain('suppression.created');
  });

  it('an ARF complaint to the feedback address: a suppression with reason complaint', async () => {
    const sent = await sendDelivered();
    const { feedback_address } = e2eEnvironment().smtpMx;
    await deliverToMx('nodemailer', feedback_address, arf(sent, sender(), feedback_address));

    const [suppression] = await pollUntil(
      () => suppressionsOf(sent.recipient),
      (found) => found.length > 0,
      { ...WAIT, what: `the complaint's suppression of ${sent.recipient}` },
    );
    expect(suppression).toMatchObject({ reason: 'complaint', domain: domain.domain });
    await waitForEvents(sent.recipient, ['suppression.created']);
    expect((await message(sent.id)).status).toBe('Delivered');
  });

  it('garbage to a bounce address is taken (250) and changes nothing; later bounces still apply', async () => {
    const untouched = await sendDelivered();
    await deliverToMx('nodemailer', untouched.returnPath, 'this is not a bounce\r\n\xff\xfe\r\n');
    await deliverToMx('swaks', untouched.returnPath, '\r\n\r\n--\r\n');

    // A bounce delivered after the garbage is applied: the garbage went through the same path.
    const later = await sendDelivered();
    await deliverToMx('nodemailer', later.returnPath, dsn(later, sender(), '5.1.1', '550 5.1.1'));
    await waitForStatus(later.id, 'Bounced');

    expect((await message(untouched.id)).status).toBe('Delivered');
    expect(await suppressionsOf(untouched.recipient)).toEqual([]);
    expect(eventTypesFor(untouched.recipient)).not.toContain('message.bounced');
  });
});
