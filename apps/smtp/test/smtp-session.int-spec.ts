import { AccountsSubjects } from '@envoi/contracts-accounts';
import { MessagesSubjects } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import { SmtpBackend } from './smtp-backend';
import { useSmtpRig } from './smtp-test-app';
import { SmtpWireClient, type SmtpWireReply } from './smtp-wire-client';

const GREETING_WAIT_MS = 10_000;

function plainToken(username: string, password: string): string {
  return Buffer.from(`\u0000${username}\u0000${password}`).toString('base64');
}

/**
 * Submission sessions with a login, against the real smtp app and the real accounts, domains,
 * suppressions and messages services (reliability plan 33, 35, 36, 38, 39; 521; drain).
 */
describe('smtp submission sessions', () => {
  const backend = new SmtpBackend();
  const rig = useSmtpRig({
    before: (platform) => backend.start(platform),
    after: () => backend.stop(),
  });
  const clients: SmtpWireClient[] = [];
  let sender: { accountId: string; domain: string };
  let username: string;
  let password: string;

  beforeAll(async () => {
    sender = await backend.sender();
    const credential = await backend.credential(sender.accountId, {
      scope: 'scoped',
      domains: [sender.domain],
    });
    username = credential.username;
    password = credential.password;
  }, 60_000);

  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  async function secured(port = rig().port, localAddress?: string): Promise<SmtpWireClient> {
    const client = await SmtpWireClient.connect(port, { localAddress });
    clients.push(client);
    expect((await client.reply(GREETING_WAIT_MS)).code).toBe(220);
    await client.startTls();
    return client;
  }

  async function loggedIn(port = rig().port, localAddress?: string): Promise<SmtpWireClient> {
    const client = await secured(port, localAddress);
    const auth = await client.command(`AUTH PLAIN ${plainToken(username, password)}`);
    expect(auth.code).toBe(235);
    return client;
  }

  async function timed(
    action: () => Promise<SmtpWireReply>,
  ): Promise<{ reply: SmtpWireReply; ms: number }> {
    const started = performance.now();
    const reply = await action();
    return { reply, ms: performance.now() - started };
  }

  it('accepts a message and answers 250 2.0.0 with its queue id once committed', async () => {
    const client = await loggedIn();
    expect((await client.command(`MAIL FROM:<app@${sender.domain}>`)).code).toBe(250);
    expect((await client.command('RCPT TO:<someone@example.net>')).code).toBe(250);
    expect((await client.command('DATA')).code).toBe(354);
    const reply = await client.command(
      [
        `From: App <app@${sender.domain}>`,
        'To: someone@example.net',
        'Subject: Hi',
        '',
        'Hello.',
        '.',
      ].join('\r\n'),
    );
    expect(reply.text).toMatch(
      new RegExp(`^250 2\\.0\\.0 Ok: queued as <[^>]+@${sender.domain.replace(/\./g, '\\.')}>$`),
    );
  });

  it('commits every transaction of concurrent sessions once, each answered its own queue id', async () => {
    // Three sessions from each of four loopback addresses (three per address at most).
    const sessions = 12;
    const clientsNow = await Promise.all(
      Array.from({ length: sessions }, (_, index) =>
        loggedIn(rig().port, `127.0.0.${2 + (index % 4)}`),
      ),
    );
    const subjects = clientsNow.map((_, index) => `Concurrent ${index} ${Date.now()}`);
    const queued = await Promise.all(
      clientsNow.map(async (client, index) => {
        expect((await client.command(`MAIL FROM:<app@${sender.domain}>`)).code).toBe(250);
        expect((await client.command(`RCPT TO:<c${index}@example.net>`)).code).toBe(250);
        expect((await client.command('DATA')).code).toBe(354);
        const reply = await client.command(
          [`From: App <app@${sender.domain}>`, `Subject: ${subjects[index]}`, '', 'Hi.', '.'].join(
            '\r\n',
          ),
        );
        expect(reply.code).toBe(250);
        return /<[^>]+>/.exec(reply.text)?.[0] ?? '';
      }),
    );

    expect(new Set(queued).size).toBe(sessions);
    for (const [index, header] of queued.entries()) {
      const listed = await backend.rpc.request(MessagesSubjects.listMessages, {
        account_id: sender.accountId,
        page: { limit: 10 },
        filters: { message_id_header: header },
      });
      expect(listed.data.map((message) => [message.recipient, message.subject])).toEqual([
        [`c${index}@example.net`, subjects[index]],
      ]);
    }
  });

  it('accepts AUTH LOGIN too', async () => {
    const client = await secured();
    expect((await client.command('AUTH LOGIN')).code).toBe(334);
    expect((await client.command(Buffer.from(username).toString('base64'))).code).toBe(334);
    expect((await client.command(Buffer.from(password).toString('base64'))).code).toBe(235);
  });

  it('answers a wrong password and an unknown user alike with 535 5.7.8, slower after each failure', async () => {
    const client = await secured();
    const wrong = await timed(() =>
      client.command(`AUTH PLAIN ${plainToken(username, 'wrong-password')}`),
    );
    const unknown = await timed(() =>
      client.command(`AUTH PLAIN ${plainToken('nobody-here', 'wrong-password')}`),
    );
    expect(wrong.reply.text).toBe('535 5.7.8 Authentication credentials invalid');
    expect(unknown.reply.text).toBe(wrong.reply.text);
    // SMTP_AUTH_FAILURE_DELAY_MS is 100: 100 ms after the first failure, 200 after the second.
    expect(wrong.ms).toBeGreaterThanOrEqual(100);
    expect(unknown.ms).toBeGreaterThanOrEqual(200);
  });

  it('refuses a MAIL FROM outside the credential with the reference text, and the null sender', async () => {
    const client = await loggedIn();
    const refused = await client.command('MAIL FROM:<app@not-ours.example>');
    expect(refused.text).toBe(
      `550 5.7.1 authz_id '${username}' is not authorized to send as tenant '${sender.accountId}' or from this domain`,
    );
    expect((await client.command('MAIL FROM:<>')).text).toMatch(/^550 5\.7\.1 /);
  });

  it('refuses CRLF/NUL and unknown parameters in MAIL and RCPT with 501 5.5.4', async () => {
    const client = await loggedIn();
    expect((await client.command(`MAIL FROM:<a\u0000b@${sender.domain}>`)).text).toMatch(
      /^501 5\.5\.4 |^501 5\.1\.7 /,
    );
    expect((await client.command(`MAIL FROM:<app@${sender.domain}> FOO=BAR`)).text).toMatch(
      /^501 5\.5\.4 /,
    );
    expect((await client.command(`MAIL FROM:<app@${sender.domain}> BODY=8BITMIME`)).code).toBe(250);
    expect((await client.command('RCPT TO:<one@example.net> XYZ=1')).text).toMatch(/^501 5\.5\.4 /);
  });

  it('refuses a fourth recipient with 452 4.5.3 and a message over SIZE with 552 5.3.4', async () => {
    const client = await loggedIn();
    expect((await client.command(`MAIL FROM:<app@${sender.domain}>`)).code).toBe(250);
    for (const name of ['one', 'two', 'three']) {
      expect((await client.command(`RCPT TO:<${name}@example.net>`)).code).toBe(250);
    }
    expect((await client.command('RCPT TO:<four@example.net>')).text).toMatch(/^452 4\.5\.3 /);
    expect((await client.command('DATA')).code).toBe(354);
    const line = `${'x'.repeat(998)}\r\n`;
    const reply = await client.command(`Subject: big\r\n\r\n${line.repeat(70)}.`);
    expect(reply.text).toMatch(/^552 5\.3\.4 /);
    expect((await client.command(`MAIL FROM:<app@${sender.domain}> SIZE=70000`)).text).toMatch(
      /^552 /,
    );
  });

  it.each([
    ['<LF>.<LF>', '\n.\n'],
    ['<LF>.<CR><LF>', '\n.\r\n'],
    ['<CR>.<CR>', '\r.\r'],
    ['<CR><LF>.<LF>', '\r\n.\n'],
  ])('keeps %s inside DATA as data: one message, no smuggled command', async (_name, probe) => {
    const client = await loggedIn();
    expect((await client.command(`MAIL FROM:<app@${sender.domain}>`)).code).toBe(250);
    expect((await client.command('RCPT TO:<someone@example.net>')).code).toBe(250);
    expect((await client.command('DATA')).code).toBe(354);
    const smuggled = `MAIL FROM:<app@${sender.domain}>\r\nRCPT TO:<victim@example.net>\r\nDATA\r\n`;
    client.write(
      `From: app@${sender.domain}\r\nSubject: probe\r\n\r\nfirst${probe}${smuggled}second\r\n.\r\n`,
    );
    const reply = await client.reply();
    expect(reply.text).toMatch(/^250 2\.0\.0 Ok: queued as /);
    // The next reply answers this NOOP: nothing else was read as a command.
    expect((await client.command('NOOP')).code).toBe(250);
  });

  it('answers 421 4.7.0 past the MAIL transactions of a connection', async () => {
    const client = await loggedIn();
    for (let transaction = 0; transaction < 2; transaction += 1) {
      expect((await client.command(`MAIL FROM:<app@${sender.domain}>`)).code).toBe(250);
      expect((await client.command('RSET')).code).toBe(250);
    }
    expect((await client.command(`MAIL FROM:<app@${sender.domain}>`)).text).toMatch(
      /^421 4\.7\.0 /,
    );
    await client.waitClosed();
  });

  it('answers 521 and closes once the account is suspended (the cached login is dropped)', async () => {
    const suspended = await backend.sender();
    const credential = await backend.credential(suspended.accountId, { scope: 'global' });
    const token = plainToken(credential.username, credential.password);
    const before = await secured();
    expect((await before.command(`AUTH PLAIN ${token}`)).code).toBe(235);
    await backend.rpc.request(AccountsSubjects.suspendAccount, {
      account_id: suspended.accountId,
      reason: 'smtp test',
    });
    const after = await secured();
    expect((await after.command(`AUTH PLAIN ${token}`)).text).toMatch(/^521 5\.7\.1 /);
    await after.waitClosed();
  });

  it('drains on SIGTERM: the transaction in flight gets its 250, new connections are refused', async () => {
    const replica = await rig().startReplica();
    const client = await loggedIn(replica.port);
    expect((await client.command(`MAIL FROM:<app@${sender.domain}>`)).code).toBe(250);
    expect((await client.command('RCPT TO:<someone@example.net>')).code).toBe(250);
    expect((await client.command('DATA')).code).toBe(354);
    client.write(`From: app@${sender.domain}\r\nSubject: drain\r\n\r\nbefore the signal\r\n`);
    const stopped = replica.smtp.stop();
    // The listener closes at once: new connections are refused while the session goes on.
    await pollUntil(
      () =>
        SmtpWireClient.connect(replica.port).then(
          (late) => {
            late.close();
            return 'accepted';
          },
          () => 'refused',
        ),
      (outcome) => outcome === 'refused',
      { what: 'the listener to close', timeoutMs: 5_000 },
    );
    client.write('after the signal\r\n.\r\n');
    expect((await client.reply()).text).toMatch(/^250 2\.0\.0 /);
    await stopped;
  });

  it('blocks an address after repeated failures with 421 4.7.0 and closes', async () => {
    // Last: the block covers every login from this address (SMTP_LOGIN_FAILURES_MAX is 6).
    let last: SmtpWireReply | undefined;
    for (let attempt = 0; attempt < 10 && last?.code !== 421; attempt += 1) {
      const client = await secured();
      last = await client.command(`AUTH PLAIN ${plainToken(`throttled-${attempt}`, 'nope')}`);
      if (last.code === 421) await client.waitClosed();
      client.close();
      await client.waitClosed();
    }
    expect(last?.text).toMatch(/^421 4\.7\.0 /);
  });
});
