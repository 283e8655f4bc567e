import { PassThrough } from 'node:stream';

import { AccountsErrorCode, type VerifiedSmtpLogin } from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';
import { DomainsErrorCode } from '@envoi/contracts-domains';
import { MessagesErrorCode } from '@envoi/contracts-messages';
import { RpcError } from '@envoi/shared-nats';
import type {
  SMTPServerAuthentication,
  SMTPServerDataStream,
  SMTPServerSession,
} from 'smtp-server';

import type { BusRequester } from './bus-requester';
import { LoginCache } from './login-cache';
import { SmtpReply } from './replies';
import { SenderAuthorizer } from './sender-authorizer';
import { SubmissionSession } from './submission-session';
import { Submitter } from './submitter';

const ACCOUNT = '5d2a4f8e-0c1b-4d3e-9f6a-7b8c9d0e1f2a';
const CREDENTIAL = '0f1e2d3c-4b5a-4968-8776-655443322110';
const LOGIN: VerifiedSmtpLogin = {
  credential_id: CREDENTIAL,
  account_id: ACCOUNT,
  account_status: 'active',
  scope: 'scoped',
  domains: ['acme.example'],
  sandbox: false,
};

type Handler = (payload: unknown, attempt: number) => unknown;

/** A bus answering each subject with a handler (a thrown RpcError is the service's error). */
class FakeBus implements BusRequester {
  readonly calls: Array<{ subject: string; payload: unknown }> = [];
  constructor(private readonly handlers: Record<string, Handler>) {}

  request: BusRequester['request'] = (subject, payload) => {
    this.calls.push({ subject: subject.name, payload });
    const handler = this.handlers[subject.name];
    const attempt = this.calls.filter((call) => call.subject === subject.name).length;
    return new Promise((resolve) => {
      if (!handler) {
        throw new RpcError(CommonErrorCode.Unavailable, `${subject.name}: no responders`);
      }
      resolve(handler(payload, attempt) as never);
    });
  };

  callsTo(subject: string): unknown[] {
    return this.calls.filter((call) => call.subject === subject).map((call) => call.payload);
  }
}

const VERIFY = 'accounts.smtp-credential.verify.v1';
const AUTHORIZE = 'domains.sender.authorize.v1';
const ACCEPT = 'messages.submission.accept.v1';

function session(id = 's1'): SMTPServerSession {
  return {
    id,
    remoteAddress: '127.0.0.1',
    transaction: 1,
    envelope: { mailFrom: { address: 'app@acme.example', args: false }, rcptTo: [] },
  } as unknown as SMTPServerSession;
}

function plain(username: string, password: string): SMTPServerAuthentication {
  return { method: 'PLAIN', username, password, validatePassword: () => false };
}

function dataStream(content: Buffer, sizeExceeded = false): SMTPServerDataStream {
  const stream = new PassThrough() as unknown as SMTPServerDataStream;
  stream.sizeExceeded = sizeExceeded;
  (stream as unknown as PassThrough).end(content);
  return stream;
}

function build(handlers: Record<string, Handler>, options: { maxMessageBytes?: number } = {}) {
  const bus = new FakeBus(handlers);
  const sleeps: number[] = [];
  const uploads: Array<{ name: string; size: number }> = [];
  const submitter = new Submitter(
    bus,
    (bucket, name, bytes) => {
      uploads.push({ name, size: bytes.length });
      return Promise.resolve({ bucket, name, size: bytes.length, sha256: '0'.repeat(64) });
    },
    3,
    () => 'submission-1',
  );
  const logins = new LoginCache(10_000, 100);
  const handlersSession = new SubmissionSession({
    bus,
    logins,
    senders: new SenderAuthorizer(bus, 10_000),
    submitter,
    limits: {
      maxMessageBytes: options.maxMessageBytes ?? 1_000_000,
      maxTransactionsPerConnection: 2,
      authFailureDelayMs: 100,
      authFailureDelayMaxMs: 350,
    },
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
  });
  return { bus, sleeps, uploads, logins, session: handlersSession };
}

const invalidLogin = () => {
  throw new RpcError(AccountsErrorCode.SmtpLoginInvalid, 'invalid');
};

function replyText(outcome: unknown): string {
  if (!(outcome instanceof SmtpReply)) throw new Error(`not a refusal: ${JSON.stringify(outcome)}`);
  return `${outcome.responseCode} ${outcome.message}`;
}

describe('SubmissionSession', () => {
  describe('AUTH', () => {
    it('logs in once over the bus and reuses the login for the same password', async () => {
      const { bus, session: handlers } = build({ [VERIFY]: () => LOGIN });
      expect(await handlers.authenticate(plain('user', 'secret'), session('a'))).toEqual({
        user: 'user',
      });
      expect(await handlers.authenticate(plain('user', 'secret'), session('b'))).toEqual({
        user: 'user',
      });
      expect(bus.callsTo(VERIFY)).toEqual([
        { username: 'user', password: 'secret', remote_address: '127.0.0.1' },
      ]);
    });

    it('asks again after the credential changed, and for another password', async () => {
      const { bus, logins, session: handlers } = build({ [VERIFY]: () => LOGIN });
      await handlers.authenticate(plain('user', 'secret'), session('a'));
      logins.forgetCredential(CREDENTIAL);
      await handlers.authenticate(plain('user', 'secret'), session('b'));
      logins.forgetAccounts([ACCOUNT]);
      await handlers.authenticate(plain('user', 'secret'), session('c'));
      await handlers.authenticate(plain('user', 'other'), session('d'));
      expect(bus.callsTo(VERIFY)).toHaveLength(4);
    });

    it('answers 535 5.7.8 after a delay that doubles with each failure on the connection, up to the cap', async () => {
      const { sleeps, session: handlers } = build({ [VERIFY]: invalidLogin });
      const connection = session('a');
      for (let attempt = 0; attempt < 4; attempt += 1) {
        expect(replyText(await handlers.authenticate(plain('user', 'bad'), connection))).toBe(
          '535 5.7.8 Authentication credentials invalid',
        );
      }
      expect(sleeps).toEqual([100, 200, 350, 350]);
      await handlers.authenticate(plain('user', 'bad'), session('b'));
      expect(sleeps[4]).toBe(100);
    });

    it('refuses an over-long or empty login with the same reply, without asking', async () => {
      const { bus, session: handlers } = build({ [VERIFY]: () => LOGIN });
      const refused = await handlers.authenticate(plain('user', 'x'.repeat(257)), session());
      expect(replyText(refused)).toBe('535 5.7.8 Authentication credentials invalid');
      expect(replyText(await handlers.authenticate(plain('', 'secret'), session()))).toMatch(
        /^535 /,
      );
      expect(bus.callsTo(VERIFY)).toHaveLength(0);
    });

    it('closes with 421 4.7.0 when the logins are throttled, and 454 when accounts is unavailable', async () => {
      const throttled = build({
        [VERIFY]: () => {
          throw new RpcError(AccountsErrorCode.SmtpLoginThrottled, 'slow down');
        },
      });
      const reply = await throttled.session.authenticate(plain('user', 'bad'), session());
      expect(replyText(reply)).toMatch(/^421 4\.7\.0 /);
      expect((reply as SmtpReply).closes).toBe(true);
      const unavailable = build({});
      expect(
        replyText(await unavailable.session.authenticate(plain('user', 'x'), session())),
      ).toMatch(/^454 4\.7\.0 /);
    });

    it('refuses an account that is not active with 521 and closes', async () => {
      const { session: handlers } = build({
        [VERIFY]: () => ({ ...LOGIN, account_status: 'suspended' }),
      });
      const reply = await handlers.authenticate(plain('user', 'secret'), session());
      expect(replyText(reply)).toBe('521 5.7.1 Account disabled');
    });
  });

  describe('MAIL FROM', () => {
    async function loggedIn(handlers: Record<string, Handler>, login: VerifiedSmtpLogin = LOGIN) {
      const built = build({ [VERIFY]: () => login, ...handlers });
      const connection = session();
      await built.session.authenticate(plain('user', 'secret'), connection);
      return { ...built, connection };
    }

    it('accepts a verified domain of the credential, asking domains once', async () => {
      const {
        bus,
        session: handlers,
        connection,
      } = await loggedIn({ [AUTHORIZE]: () => ({ dns_valid: true }) });
      expect(
        await handlers.mailFrom({ address: 'app@ACME.example', args: false }, connection),
      ).toBeNull();
      expect(
        await handlers.mailFrom({ address: 'other@acme.example', args: false }, connection),
      ).toBeNull();
      expect(bus.callsTo(AUTHORIZE)).toEqual([{ account_id: ACCOUNT, domain: 'acme.example' }]);
    });

    it('refuses with the reference text outside the scope, on an unknown or unverified domain', async () => {
      const text = `550 5.7.1 authz_id 'user' is not authorized to send as tenant '${ACCOUNT}' or from this domain`;
      const scoped = await loggedIn({ [AUTHORIZE]: () => ({ dns_valid: true }) });
      expect(
        replyText(
          await scoped.session.mailFrom(
            { address: 'a@other.example', args: false },
            scoped.connection,
          ),
        ),
      ).toBe(text);
      const global = { ...LOGIN, scope: 'global' as const, domains: [] };
      const unknown = await loggedIn(
        {
          [AUTHORIZE]: () => {
            throw new RpcError(DomainsErrorCode.DomainNotFound, 'no such domain');
          },
        },
        global,
      );
      expect(
        replyText(
          await unknown.session.mailFrom(
            { address: 'a@other.example', args: false },
            unknown.connection,
          ),
        ),
      ).toBe(text);
      const unverified = await loggedIn({ [AUTHORIZE]: () => ({ dns_valid: false }) });
      expect(
        replyText(
          await unverified.session.mailFrom(
            { address: 'a@acme.example', args: false },
            unverified.connection,
          ),
        ),
      ).toBe(text);
    });

    it('refuses the null sender, and answers 421 past the transactions of a connection', async () => {
      const { session: handlers, connection } = await loggedIn({
        [AUTHORIZE]: () => ({ dns_valid: true }),
      });
      expect(replyText(await handlers.mailFrom({ address: '', args: false }, connection))).toMatch(
        /^550 5\.7\.1 /,
      );
      expect(
        await handlers.mailFrom({ address: 'a@acme.example', args: false }, connection),
      ).toBeNull();
      const third = await handlers.mailFrom({ address: 'a@acme.example', args: false }, connection);
      expect(replyText(third)).toMatch(/^421 4\.7\.0 /);
    });

    it('refuses ESMTP parameters it does not offer with 501 5.5.4', async () => {
      const { session: handlers, connection } = await loggedIn({
        [AUTHORIZE]: () => ({ dns_valid: true }),
      });
      const withBody = {
        address: 'a@acme.example',
        args: { BODY: '8BITMIME', SMTPUTF8: true as const },
      };
      expect(await handlers.mailFrom(withBody, connection)).toBeNull();
      const withDsn = { address: 'a@acme.example', args: { RET: 'FULL' } };
      expect(replyText(await handlers.mailFrom(withDsn, connection))).toBe(
        '501 5.5.4 Parameter not recognized: RET',
      );
      expect(handlers.rcptTo({ address: 'b@example.net', args: false })).toBeNull();
      expect(
        replyText(handlers.rcptTo({ address: 'b@example.net', args: { NOTIFY: 'NEVER' } })),
      ).toMatch(/^501 5\.5\.4 /);
    });

    it('answers 451 4.3.0 when domains does not answer', async () => {
      const { session: handlers, connection } = await loggedIn({});
      expect(
        replyText(await handlers.mailFrom({ address: 'a@acme.example', args: false }, connection)),
      ).toMatch(/^451 4\.3\.0 /);
    });
  });

  describe('DATA', () => {
    const accepted = { message_id_header: '<id-1@acme.example>', messages: [] };

    async function transaction(
      handlers: Record<string, Handler>,
      options: { maxMessageBytes?: number } = {},
    ) {
      const built = build({ [VERIFY]: () => LOGIN, ...handlers }, options);
      const connection = session();
      connection.envelope = {
        mailFrom: { address: 'app@acme.example', args: false },
        rcptTo: [
          { address: 'one@example.net', args: false },
          { address: 'two@example.net', args: false },
        ],
        bodyType: '8bitmime',
      };
      await built.session.authenticate(plain('user', 'secret'), connection);
      return { ...built, connection };
    }

    it('answers 250 with the queue id once committed, sending the bytes as received', async () => {
      const {
        bus,
        session: handlers,
        connection,
      } = await transaction({ [ACCEPT]: () => accepted });
      const raw = Buffer.from('Subject: hi\r\n\r\nbody\nbare LF kept\r\n');
      expect(await handlers.data(dataStream(raw), connection)).toBe(
        '2.0.0 Ok: queued as <id-1@acme.example>',
      );
      expect(bus.callsTo(ACCEPT)).toEqual([
        {
          account_id: ACCOUNT,
          credential_id: CREDENTIAL,
          credential_sandbox: false,
          credential_domains: ['acme.example'],
          envelope_from: 'app@acme.example',
          recipients: ['one@example.net', 'two@example.net'],
          remote_address: '127.0.0.1',
          body_type: '8BITMIME',
          raw_base64: raw.toString('base64'),
          submission_id: 'submission-1',
        },
      ]);
    });

    it('sends the same submission again after a lost reply, then answers 451 when it never comes', async () => {
      const lostOnce = await transaction({
        [ACCEPT]: (_payload, attempt) => {
          if (attempt === 1) throw new RpcError(CommonErrorCode.Unavailable, 'timed out');
          return accepted;
        },
      });
      expect(
        await lostOnce.session.data(dataStream(Buffer.from('x\r\n')), lostOnce.connection),
      ).toMatch(/^2\.0\.0 /);
      const ids = lostOnce.bus
        .callsTo(ACCEPT)
        .map((call) => (call as { submission_id: string }).submission_id);
      expect(ids).toEqual(['submission-1', 'submission-1']);

      const never = await transaction({});
      expect(
        replyText(await never.session.data(dataStream(Buffer.from('x\r\n')), never.connection)),
      ).toMatch(/^451 4\.3\.0 /);
      expect(never.bus.callsTo(ACCEPT)).toHaveLength(3);
    });

    it('sends a large message through the upload bucket', async () => {
      const {
        bus,
        uploads,
        session: handlers,
        connection,
      } = await transaction({ [ACCEPT]: () => accepted });
      const raw = Buffer.alloc(300 * 1024, 'a');
      await handlers.data(dataStream(raw), connection);
      expect(uploads).toEqual([{ name: 'smtp-submission-1', size: raw.length }]);
      const request = bus.callsTo(ACCEPT)[0] as { raw_base64?: string; upload?: { name: string } };
      expect(request.raw_base64).toBeUndefined();
      expect(request.upload?.name).toBe('smtp-submission-1');
    });

    it('refuses an oversized message with 552 5.3.4 without submitting it', async () => {
      const {
        bus,
        session: handlers,
        connection,
      } = await transaction({ [ACCEPT]: () => accepted }, { maxMessageBytes: 10 });
      expect(replyText(await handlers.data(dataStream(Buffer.alloc(11, 'a')), connection))).toMatch(
        /^552 5\.3\.4 /,
      );
      expect(
        replyText(await handlers.data(dataStream(Buffer.alloc(5, 'a'), true), connection)),
      ).toMatch(/^552 5\.3\.4 /);
      expect(bus.callsTo(ACCEPT)).toHaveLength(0);
    });

    it.each([
      [MessagesErrorCode.SubmissionSenderNotAllowed, /^550 5\.7\.1 nope$/],
      [MessagesErrorCode.SubmissionMalformed, /^552 5\.6\.0 Malformed message: nope$/],
      [MessagesErrorCode.SubmissionControlHeaderInvalid, /^550 5\.6\.0 nope$/],
      [MessagesErrorCode.SubmissionAccountDisabled, /^521 5\.7\.1 /],
      [CommonErrorCode.Internal, /^451 4\.3\.0 /],
    ])('maps %s to its reply', async (code, reply) => {
      const { session: handlers, connection } = await transaction({
        [ACCEPT]: () => {
          throw new RpcError(code, 'nope');
        },
      });
      expect(replyText(await handlers.data(dataStream(Buffer.from('x\r\n')), connection))).toMatch(
        reply,
      );
    });
  });
});
