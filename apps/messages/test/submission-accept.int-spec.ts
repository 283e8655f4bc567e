import { randomBytes, randomUUID } from 'node:crypto';

import { AccountsSubjects } from '@envoi/contracts-accounts';
import {
  type AcceptSubmissionRequest,
  type AcceptSubmissionResult,
  deliveryJobMessageIds,
  MESSAGE_UPLOADS_BUCKET,
  MessagesErrorCode,
  MessagesStreamSubjects,
  MessagesSubjects,
} from '@envoi/contracts-messages';
import { SuppressionsSubjects } from '@envoi/contracts-suppressions';
import { putUpload } from '@envoi/shared-nats';

import { MessagesRepository } from '../src/messages/messages.repository';
import { TrackingRepository } from '../src/tracking/tracking.repository';
import {
  collected,
  createDomain,
  messageBody,
  type MessagesTestApp,
  newSender,
  type Sender,
  startMessagesService,
  suppress,
  uuidOf,
} from './messages-test-app';
import { getMessage, headerOf, storedRaw } from './suites/accept.suite';
import { cappedSender } from './suites/credit.suite';

const CREDENTIAL_ID = '0190f5c2-6c1e-7a3b-8c4d-000000000016';

/** A submitted message, CRLF line endings, with the headers given before the usual ones. */
function mime(sender: Sender, headers: string[] = [], body = 'Hello over SMTP.\r\n'): string {
  return [
    ...headers,
    `From: "App" <${sender.from}>`,
    'To: someone@recipient.test',
    'Subject: =?UTF-8?B?w6l0w6k=?= report',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    body,
  ].join('\r\n');
}

function submission(
  sender: Sender,
  raw: string | Buffer,
  overrides: Partial<AcceptSubmissionRequest> = {},
): AcceptSubmissionRequest {
  return {
    account_id: sender.accountId,
    credential_id: CREDENTIAL_ID,
    credential_sandbox: false,
    envelope_from: sender.from,
    recipients: [`to-${randomBytes(3).toString('hex')}@recipient.test`],
    raw_base64: Buffer.from(raw).toString('base64'),
    submission_id: randomUUID(),
    ...overrides,
  };
}

/**
 * The messages service accepting SMTP submissions (MessagesSubjects.acceptSubmission) next to
 * the real accounts, domains and suppressions services, as the smtp edge calls it.
 */
describe('messages service: SMTP submissions', () => {
  let app: MessagesTestApp;

  beforeAll(async () => {
    app = await startMessagesService();
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  }, 60_000);

  const submit = (request: AcceptSubmissionRequest): Promise<AcceptSubmissionResult> =>
    app.rpc.request(MessagesSubjects.acceptSubmission, request);

  async function messageRow(id: string | null) {
    const message = await app.app.get(MessagesRepository).findById(uuidOf(id));
    if (!message) throw new Error(`no message ${String(id)}`);
    return message;
  }

  async function sendCount(accountId: string): Promise<number> {
    const [row] = await app.dataSource.query<Array<{ count: number }>>(
      `SELECT count(*)::int AS count FROM messages.sends WHERE account_id = $1`,
      [accountId],
    );
    return row?.count ?? -1;
  }

  it('stores a plain message as submitted, with a Message-ID and a Date set, and announces it', async () => {
    const sender = await newSender(app);
    const raw = mime(sender);
    const request = submission(sender, raw);

    const result = await submit(request);

    expect(result.messages).toEqual([
      {
        recipient: request.recipients[0],
        id: expect.any(String) as unknown,
        status: 'queued',
        error: null,
      },
    ]);
    const header = result.message_id_header;
    expect(header).toMatch(new RegExp(`^<[0-9a-f-]{36}@${sender.domain.domain}>$`));
    const stored = (await storedRaw(app, uuidOf(result.messages[0]?.id ?? null)))?.toString('utf8');
    const lines = stored?.split('\r\n') ?? [];
    expect(lines[0]).toBe(`Message-ID: ${header}`);
    expect(lines[1]).toMatch(/^Date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    // Everything after the added fields is the client's, byte for byte.
    expect(stored?.slice(lines[0]?.length ?? 0).replace(/^\r\n[^\r]*\r\n/, '')).toBe(raw);

    const message = await messageRow(result.messages[0]?.id ?? null);
    expect(message).toMatchObject({
      status: 'Received',
      sender: sender.from,
      recipient: request.recipients[0],
      subject: 'été report',
      credentialId: CREDENTIAL_ID,
      sandbox: false,
    });
    const record = await getMessage(app, sender.accountId, result.messages[0]?.id ?? '');
    expect(record.content).toBe(stored);
    expect(headerOf(record, 'subject')).toEqual(['été report']);
    const [reception] = await collected(
      app.events,
      (event) => event.type === 'message.reception' && event.data.account_id === sender.accountId,
      1,
    );
    expect(reception?.value.data).toMatchObject({
      from: sender.from,
      recipient: request.recipients[0],
      subject: 'été report',
      message_id_header: result.messages[0]?.id,
    });
    const id = uuidOf(result.messages[0]?.id ?? null);
    const [job] = await collected(app.jobs, (job) => deliveryJobMessageIds(job).includes(id), 1);
    expect(job?.value).toEqual({ message_id: id, account_id: sender.accountId, attempt: 1 });
  });

  it('keeps the client’s Message-ID on the sender’s domain and its Date', async () => {
    const sender = await newSender(app);
    const own = `<client.1@${sender.domain.domain.toUpperCase()}>`;
    const raw = mime(sender, [`Message-ID: ${own}`, 'Date: Tue, 24 Nov 2026 10:00:00 +0100']);

    const result = await submit(submission(sender, raw));

    expect(result.message_id_header).toBe(own);
    expect((await storedRaw(app, uuidOf(result.messages[0]?.id ?? null)))?.toString()).toBe(raw);
  });

  it('lists a submitted send’s messages by the Message-ID header they are delivered with', async () => {
    const sender = await newSender(app);
    const own = `<Client.List@${sender.domain.domain.toUpperCase()}>`;
    const recipients = ['a@recipient.test', 'b@recipient.test'];
    const result = await submit(
      submission(sender, mime(sender, [`Message-ID: ${own}`]), { recipients }),
    );
    const generated = await submit(submission(sender, mime(sender)));
    const listed = async (header: string) => {
      const page = await app.rpc.request(MessagesSubjects.listMessages, {
        account_id: sender.accountId,
        filters: { message_id_header: header },
        page: { limit: 10 },
      });
      return page.data.map((message) => message.id).sort();
    };

    const ids = result.messages.map((entry) => uuidOf(entry.id)).sort();
    expect(ids).toHaveLength(2);
    expect(await listed(own)).toEqual(ids);
    expect(await listed(`client.list@${sender.domain.domain}`)).toEqual(ids);
    expect(await listed(generated.message_id_header)).toEqual(
      generated.messages.map((entry) => uuidOf(entry.id)),
    );
    expect(await listed(`<client.list@elsewhere.test>`)).toEqual([]);
    const stranger = await newSender(app);
    const elsewhere = await app.rpc.request(MessagesSubjects.listMessages, {
      account_id: stranger.accountId,
      filters: { message_id_header: own },
      page: { limit: 10 },
    });
    expect(elsewhere.data).toEqual([]);
  });

  it('replaces a Message-ID on another domain', async () => {
    const sender = await newSender(app);
    const raw = mime(sender, ['Message-ID: <x@elsewhere.test>']);

    const result = await submit(submission(sender, raw));

    expect(result.message_id_header).not.toBe('<x@elsewhere.test>');
    const stored = (await storedRaw(app, uuidOf(result.messages[0]?.id ?? null)))?.toString();
    expect(stored).not.toContain('elsewhere.test');
    expect(stored?.startsWith(`Message-ID: ${result.message_id_header}\r\n`)).toBe(true);
  });

  it('makes each recipient its own message of one send, and answers error for a suppressed one', async () => {
    const sender = await newSender(app);
    await suppress(app, sender.accountId, 'blocked@recipient.test', 'hard bounce');
    const recipients = ['a@recipient.test', 'Blocked@Recipient.test', 'b@recipient.test'];

    const result = await submit(submission(sender, mime(sender), { recipients }));

    expect(result.messages.map((entry) => [entry.recipient, entry.status, entry.error])).toEqual([
      ['a@recipient.test', 'queued', null],
      ['Blocked@Recipient.test', 'error', 'recipient is suppressed: hard bounce'],
      ['b@recipient.test', 'queued', null],
    ]);
    expect(new Set(result.messages.map((entry) => entry.id)).size).toBe(3);
    expect(await sendCount(sender.accountId)).toBe(1);
    const [suppressed] = await collected(
      app.events,
      (event) => event.type === 'message.suppressed' && event.data.account_id === sender.accountId,
      1,
    );
    expect(suppressed?.value.data.recipient).toBe('Blocked@Recipient.test');
  });

  it('checks the next submission against a suppression created or deleted after its snapshot was read', async () => {
    const sender = await newSender(app);
    const outcome = async (recipient: string) =>
      (await submit(submission(sender, mime(sender), { recipients: [recipient] }))).messages.map(
        (entry) => [entry.status, entry.error],
      );
    // The account's suppressions are read (and kept) by the first submission.
    expect(await outcome('later@recipient.test')).toEqual([['queued', null]]);

    await suppress(app, sender.accountId, 'later@recipient.test', 'complaint');
    expect(await outcome('later@recipient.test')).toEqual([
      ['error', 'recipient is suppressed: complaint'],
    ]);

    await app.rpc.request(SuppressionsSubjects.delete, {
      account_id: sender.accountId,
      email: 'later@recipient.test',
    });
    expect(await outcome('later@recipient.test')).toEqual([['queued', null]]);
  });

  it('applies the control headers over the account defaults and strips them', async () => {
    const sender = await newSender(app);
    const raw = mime(sender, [
      'AhaSend-Track-Opens: false',
      'ahasend-track-clicks: true',
      'ahasend-sandbox: 1',
      'AhaSend-Sandbox-Result: bounce',
      'ahasend-message-retention: 3',
      'ahasend-data-retention: 1',
      'ahasend-tags: alpha,',
      ' Beta',
    ]);

    const result = await submit(submission(sender, raw));

    const message = await messageRow(result.messages[0]?.id ?? null);
    expect(message).toMatchObject({
      trackOpens: false,
      trackClicks: true,
      sandbox: true,
      sandboxResult: 'bounce',
      retentionMetadataDays: 3,
      retentionDataDays: 1,
      tags: ['alpha', 'Beta'],
    });
    const stored = (await storedRaw(app, uuidOf(result.messages[0]?.id ?? null)))?.toString();
    expect(stored?.toLowerCase()).not.toContain('ahasend');
    expect(stored?.endsWith(mime(sender))).toBe(true);
  });

  it('records the tracked links of a submitted HTML part and marks its delivery view as submitted', async () => {
    const sender = await newSender(app);
    const html = [
      'Content-Type: text/html; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '<a href=3D"https://example.com/one">1</a> <a href=3D"mailto:x@example.com">m</a>',
      '<a href=3D"https://example.com/two?a=3D1&amp;b=3D2">2</a>',
    ].join('\r\n');
    const raw = mime(sender, ['ahasend-track-clicks: true']).replace(
      /Content-Type: text\/plain[^]*$/,
      html,
    );

    const result = await submit(submission(sender, raw));

    const id = uuidOf(result.messages[0]?.id ?? null);
    const tracking = app.app.get(TrackingRepository);
    expect(await tracking.linkUrl(id, 0)).toBe('https://example.com/one');
    expect(await tracking.linkUrl(id, 1)).toBe('https://example.com/two?a=1&b=2');
    expect(await tracking.linkUrl(id, 2)).toBeUndefined();
    const views = await app.rpc.request(MessagesSubjects.deliveryViewsV2, { message_ids: [id] });
    expect(views.views[0]).toMatchObject({ submitted: true, tracking: { click: true } });
  });

  it('simulates for a sandbox credential', async () => {
    const sender = await newSender(app);

    const result = await submit(
      submission(sender, mime(sender, ['AhaSend-Sandbox: false']), { credential_sandbox: true }),
    );

    expect(await messageRow(result.messages[0]?.id ?? null)).toMatchObject({
      sandbox: true,
      sandboxResult: 'deliver',
    });
  });

  it.each([
    [
      'a bad control header',
      ['ahasend-metadata-retention: 90'],
      MessagesErrorCode.SubmissionControlHeaderInvalid,
      'ahasend-metadata-retention',
    ],
    ['no header block', null, MessagesErrorCode.SubmissionMalformed, 'header block'],
  ])('refuses %s and stores nothing', async (_case, headers, code, text) => {
    const sender = await newSender(app);
    const raw = headers === null ? 'just a line of text\r\n\r\nbody\r\n' : mime(sender, headers);

    await expect(submit(submission(sender, raw))).rejects.toMatchObject({
      code,
      message: expect.stringContaining(text) as unknown,
    });
    expect(await sendCount(sender.accountId)).toBe(0);
  });

  it('refuses a message without a From address', async () => {
    const sender = await newSender(app);
    const raw = 'To: x@recipient.test\r\nSubject: no from\r\n\r\nbody\r\n';

    await expect(submit(submission(sender, raw))).rejects.toMatchObject({
      code: MessagesErrorCode.SubmissionMalformed,
    });
  });

  it('refuses a From outside the credential’s domains or the account’s, with the reference text', async () => {
    const sender = await newSender(app);
    const other = await createDomain(app, sender.accountId);
    const text = `authz_id '${CREDENTIAL_ID}' is not authorized to send as tenant '${sender.accountId}' or from this domain`;

    await expect(
      submit(submission(sender, mime(sender), { credential_domains: [other.domain] })),
    ).rejects.toMatchObject({ code: MessagesErrorCode.SubmissionSenderNotAllowed, message: text });
    const stranger = { ...sender, from: 'me@not-ours.example.test' };
    await expect(submit(submission(stranger, mime(stranger)))).rejects.toMatchObject({
      code: MessagesErrorCode.SubmissionSenderNotAllowed,
      message: text,
    });
    expect(await sendCount(sender.accountId)).toBe(0);
    // Within its domains, a scoped credential sends.
    const allowed = await submit(
      submission(sender, mime(sender), { credential_domains: [sender.domain.domain] }),
    );
    expect(allowed.messages[0]?.status).toBe('queued');
  });

  it('answers a repeated submission with the committed result, storing it once', async () => {
    const sender = await newSender(app);
    const request = submission(sender, mime(sender), {
      recipients: ['one@recipient.test', 'two@recipient.test'],
    });

    const first = await submit(request);
    const again = await submit(request);
    const concurrent = await Promise.all([submit(request), submit(request)]);

    expect(again).toEqual(first);
    expect(concurrent).toEqual([first, first]);
    expect(await sendCount(sender.accountId)).toBe(1);
  });

  it('stores concurrent submissions each once, a repeated one answered the committed result', async () => {
    const sender = await newSender(app);
    const requests = Array.from({ length: 12 }, () => submission(sender, mime(sender)));
    const repeated = requests[3];
    if (!repeated) throw new Error('no request to repeat');

    const results = await Promise.all([...requests, repeated, repeated].map(submit));

    const ids = results.map((result) => result.messages[0]?.id ?? null);
    expect(new Set(ids.slice(0, 12)).size).toBe(12);
    expect(results.slice(12)).toEqual([results[3], results[3]]);
    expect(await sendCount(sender.accountId)).toBe(12);
    for (const id of ids) expect((await messageRow(id)).status).toBe('Received');
    // Each message's reception event is published once, whichever group committed it.
    const receptions = await collected(
      app.events,
      (event) => event.type === 'message.reception' && event.data.account_id === sender.accountId,
      12,
    );
    expect(receptions.map(({ value }) => value.data.id).sort()).toEqual(
      ids.slice(0, 12).map(uuidOf).sort(),
    );
    // One reception batch per commit, however many submissions it held (rows one statement
    // wrote share its transaction's start), and no `message.send_receptions`.
    const [outbox] = await app.dataSource.query<
      Array<{ commits: number; batches: number; sendReceptions: number }>
    >(
      `SELECT count(DISTINCT created_at)::int AS commits,
              count(*) FILTER (WHERE subject = $2)::int AS batches,
              count(*) FILTER (WHERE subject = $3)::int AS "sendReceptions"
         FROM messages.outbox WHERE payload::text LIKE '%' || $1 || '%'`,
      [
        sender.accountId,
        MessagesStreamSubjects.receptionBatch.name,
        MessagesStreamSubjects.sendReceptions.name,
      ],
    );
    expect(outbox).toEqual({
      commits: outbox?.commits,
      batches: outbox?.commits,
      sendReceptions: 0,
    });
    const batchIds = new Set(receptions.map(({ batch }) => batch?.msgId));
    expect(batchIds.size).toBe(outbox?.commits);
  });

  it('accepts a batch of submissions each on its own: a bad one refused alone, a repeated batch answered alike', async () => {
    const sender = await newSender(app);
    const good = Array.from({ length: 4 }, () => submission(sender, mime(sender)));
    const noFrom = submission(sender, 'Subject: no sender\r\n\r\nHi.\r\n');
    const invalid = { ...submission(sender, mime(sender)), recipients: [] };
    const batch = { submissions: [good[0], noFrom, good[1], invalid, good[2], good[3]] };

    const { outcomes } = await app.rpc.request(MessagesSubjects.acceptSubmissions, batch);
    const again = await app.rpc.request(MessagesSubjects.acceptSubmissions, batch);

    expect(outcomes.map((outcome) => ('result' in outcome ? 'ok' : outcome.error.code))).toEqual([
      'ok',
      MessagesErrorCode.SubmissionMalformed,
      'ok',
      'common.validation_failed',
      'ok',
      'ok',
    ]);
    const ids = outcomes.flatMap((outcome) =>
      'result' in outcome ? [outcome.result.messages[0]?.id ?? null] : [],
    );
    expect(new Set(ids).size).toBe(4);
    for (const id of ids) expect((await messageRow(id)).status).toBe('Received');
    expect(again.outcomes).toEqual(outcomes);
    expect(await sendCount(sender.accountId)).toBe(4);
    // The same submission alone is answered its committed result too.
    const alone = await submit(good[0] ?? noFrom);
    expect({ result: alone }).toEqual(outcomes[0]);
  });

  it('refuses a batch that is not a list of 1 to 16 submissions, storing nothing', async () => {
    const sender = await newSender(app);
    const seventeen = Array.from({ length: 17 }, () => submission(sender, mime(sender)));
    for (const submissions of [[], seventeen]) {
      await expect(
        app.rpc.request(MessagesSubjects.acceptSubmissions, { submissions }),
      ).rejects.toMatchObject({ code: 'common.validation_failed' });
    }
    expect(await sendCount(sender.accountId)).toBe(0);
  });

  it('records a submission whose every recipient is suppressed, and answers its retry alike', async () => {
    const sender = await newSender(app);
    await suppress(app, sender.accountId, 'gone@recipient.test', 'hard bounce');
    const request = submission(sender, mime(sender), { recipients: ['gone@recipient.test'] });

    const first = await submit(request);
    const again = await submit(request);

    expect(first.messages).toEqual([
      {
        recipient: 'gone@recipient.test',
        id: null,
        status: 'error',
        error: 'recipient is suppressed: hard bounce',
      },
    ]);
    expect(again).toEqual(first);
    const [row] = await app.dataSource.query<Array<{ count: number }>>(
      `SELECT count(*)::int AS count FROM messages.accepted_requests WHERE account_id = $1`,
      [sender.accountId],
    );
    expect(row?.count).toBe(1);
    expect(await sendCount(sender.accountId)).toBe(0);
  });

  it('takes a large message from the upload bucket, body byte for byte', async () => {
    const sender = await newSender(app);
    const body = `${randomBytes(600_000).toString('base64').replace(/.{76}/g, '$&\r\n')}\r\n`;
    const raw = mime(
      sender,
      ['Message-ID: <big@' + sender.domain.domain + '>', 'Date: Tue, 24 Nov 2026 10:00:00 +0000'],
      body,
    );
    const bytes = Buffer.from(raw);
    const upload = await putUpload(
      app.connection,
      MESSAGE_UPLOADS_BUCKET,
      randomUUID(),
      bytes,
      600_000,
    );

    const request = submission(sender, '', { upload });
    delete request.raw_base64;
    const result = await submit(request);

    expect(result.messages[0]?.status).toBe('queued');
    expect(await storedRaw(app, uuidOf(result.messages[0]?.id ?? null))).toEqual(bytes);
  });

  it('refuses a suspended account', async () => {
    const sender = await newSender(app);
    await app.rpc.request(AccountsSubjects.suspendAccount, {
      account_id: sender.accountId,
      reason: 'test',
    });

    await expect(submit(submission(sender, mime(sender)))).rejects.toMatchObject({
      code: MessagesErrorCode.SubmissionAccountDisabled,
    });
    expect(await sendCount(sender.accountId)).toBe(0);
  });

  it('applies the monthly credit per recipient, and refuses a submission once it is used up', async () => {
    const sender = await cappedSender(app, 1);
    const recipients = ['first@recipient.test', 'second@recipient.test'];

    const first = await submit(submission(sender, mime(sender), { recipients }));

    expect(first.messages.map((entry) => [entry.status, entry.error])).toEqual([
      ['queued', null],
      ['error', 'monthly credit of 1 messages used up for this period'],
    ]);
    const over = submission(sender, mime(sender));
    const refusal = { code: MessagesErrorCode.SubmissionAccountDisabled };
    await expect(submit(over)).rejects.toMatchObject(refusal);
    // Its retry is answered alike.
    await expect(submit(over)).rejects.toMatchObject(refusal);
    expect(await sendCount(sender.accountId)).toBe(1);
  });

  it('honours the control headers in a v1 send’s headers, and does not send them', async () => {
    const sender = await newSender(app);
    const v1 = (headers: Record<string, string>) =>
      app.rpc.request(MessagesSubjects.createMessage, {
        account_id: sender.accountId,
        api: 'v1',
        body: messageBody(sender, { headers: { 'X-Keep': 'yes', ...headers } }),
      });

    const result = await v1({ 'AhaSend-Track-Clicks': 'false', 'ahasend-tags': 'v1, legacy' });

    const message = await messageRow(result.data[0]?.id ?? null);
    expect(message).toMatchObject({ trackClicks: false, tags: ['v1', 'legacy'] });
    const stored = (await storedRaw(app, message.id))?.toString();
    expect(stored).toContain('X-Keep: yes');
    expect(stored?.toLowerCase()).not.toContain('ahasend');
    await expect(v1({ 'ahasend-data-retention': '31' })).rejects.toMatchObject({
      code: MessagesErrorCode.InvalidMessage,
      message: expect.stringContaining('ahasend-data-retention') as unknown,
    });
  });
});
