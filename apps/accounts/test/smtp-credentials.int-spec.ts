import {
  AccountsErrorCode,
  AccountsSubjects,
  type CreatedSmtpCredentialRecord,
  type CreateSmtpCredentialBody,
  type SmtpCredentialChangedEvent,
} from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';
import { pollUntil } from '@envoi/shared-testing';

import { SmtpLoginFailuresPurgeService } from '../src/smtp-credentials/smtp-login-failures-purge.service';
import { SmtpPasswordCipher } from '../src/smtp-credentials/smtp-password-cipher';
import {
  type AccountsTestApp,
  EventRecorder,
  startAccountsService,
  UNKNOWN_ID,
} from './accounts-test-app';

/**
 * SMTP credentials against the real accounts service, PostgreSQL, NATS and domains service: the
 * API operations, domain links, login verification and its failed-login throttle.
 */
describe('accounts service: smtp credentials', () => {
  let app: AccountsTestApp | undefined;

  beforeAll(async () => {
    app = await startAccountsService();
  }, 90_000);

  afterAll(async () => {
    await app?.close();
  }, 30_000);

  const getApp = (): AccountsTestApp => {
    if (!app) throw new Error('the accounts service did not start');
    return app;
  };

  const newAccountId = async () => (await getApp().createAccount()).account.id;

  const create = (accountId: string, credential: CreateSmtpCredentialBody) =>
    getApp().rpc.request(AccountsSubjects.createSmtpCredential, {
      account_id: accountId,
      credential,
    });

  const verify = (username: string, password: string, remoteAddress = '127.0.0.10') =>
    getApp().rpc.request(AccountsSubjects.verifySmtpLogin, {
      username,
      password,
      remote_address: remoteAddress,
    });

  let addressCounter = 0;
  /** A loopback client address no other test uses, so throttle counts never mix. */
  const freshAddress = () =>
    `127.0.${Math.floor(++addressCounter / 250)}.${(addressCounter % 250) + 1}`;

  describe('create, list, get, delete', () => {
    it('creates a global credential with a one-time password, sealed and hashed at rest', async () => {
      const accountId = await newAccountId();
      const created = await create(accountId, { name: 'WordPress', scope: 'global' });

      expect(created).toMatchObject({
        object: 'credential_smtp',
        name: 'WordPress',
        scope: 'global',
        sandbox: false,
        domains: [],
      });
      expect(created.username).toMatch(/^envoi-smtp-[a-z0-9]{20}$/);
      expect(created.password).toMatch(/^[A-Za-z0-9]{40}$/);

      const rows: Array<{ password_hash: string; password_ciphertext: string }> =
        await getApp().dataSource.query(
          'SELECT password_hash, password_ciphertext FROM accounts.smtp_credentials WHERE id = $1',
          [created.id],
        );
      const [row] = rows;
      expect(row?.password_hash).toMatch(/^scrypt\$/);
      expect(row?.password_hash).not.toContain(created.password);
      expect(row?.password_ciphertext).not.toContain(created.password);
      const cipher = new SmtpPasswordCipher(getApp().config.SMTP_PASSWORD_ENCRYPTION_KEY);
      expect(cipher.open(row?.password_ciphertext ?? '', created.id)).toBe(created.password);

      const got = await getApp().rpc.request(AccountsSubjects.getSmtpCredential, {
        account_id: accountId,
        credential_id: created.id,
      });
      expect(got).not.toHaveProperty('password');
      expect(got).toEqual(withoutPassword(created));
    });

    it('links a scoped credential to the account domains, normalised, and refuses others', async () => {
      const accountId = await newAccountId();
      const domain = await getApp().createDomain(accountId);
      const created = await create(accountId, {
        name: 'scoped',
        scope: 'scoped',
        sandbox: true,
        domains: [domain.domain.toUpperCase()],
      });
      expect(created).toMatchObject({ scope: 'scoped', sandbox: true, domains: [domain.domain] });

      await expect(
        create(accountId, { name: 'x', scope: 'scoped', domains: ['elsewhere.example.test'] }),
      ).rejects.toMatchObject({
        code: AccountsErrorCode.DomainNotOwned,
        message: "domain 'elsewhere.example.test' not found",
      });
      await expect(create(accountId, { name: 'x', scope: 'scoped' })).rejects.toMatchObject({
        code: CommonErrorCode.ValidationFailed,
        message: 'domains must be a non-empty list for a scoped credential',
      });
    });

    it('lists newest first with paging, and a domain-scoped view sees only linked credentials', async () => {
      const accountId = await newAccountId();
      const mine = await getApp().createDomain(accountId);
      const other = await getApp().createDomain(accountId);
      const global = await create(accountId, { name: 'g', scope: 'global' });
      const linked = await create(accountId, {
        name: 'm',
        scope: 'scoped',
        domains: [mine.domain],
      });
      const unlinked = await create(accountId, {
        name: 'o',
        scope: 'scoped',
        domains: [other.domain],
      });

      const first = await getApp().rpc.request(AccountsSubjects.listSmtpCredentials, {
        account_id: accountId,
        page: { limit: 2 },
      });
      expect(first.data.map((c) => c.id)).toEqual([unlinked.id, linked.id]);
      expect(first.has_more).toBe(true);
      const second = await getApp().rpc.request(AccountsSubjects.listSmtpCredentials, {
        account_id: accountId,
        page: { limit: 2, after: first.next_position },
      });
      expect(second.data.map((c) => c.id)).toEqual([global.id]);

      const scoped = await getApp().rpc.request(AccountsSubjects.listSmtpCredentials, {
        account_id: accountId,
        page: { limit: 100 },
        domains: [mine.domain],
      });
      expect(scoped.data.map((c) => c.id)).toEqual([linked.id]);

      for (const hidden of [global, unlinked]) {
        const ref = { account_id: accountId, credential_id: hidden.id, domains: [mine.domain] };
        await expect(
          getApp().rpc.request(AccountsSubjects.getSmtpCredential, ref),
        ).rejects.toMatchObject({ code: AccountsErrorCode.SmtpCredentialNotFound });
        await expect(
          getApp().rpc.request(AccountsSubjects.deleteSmtpCredential, ref),
        ).rejects.toMatchObject({ code: AccountsErrorCode.SmtpCredentialNotFound });
      }
    });

    it('answers not found for another account and an unknown id', async () => {
      const created = await create(await newAccountId(), { name: 'a', scope: 'global' });
      const stranger = await newAccountId();
      for (const ref of [
        { account_id: stranger, credential_id: created.id },
        { account_id: stranger, credential_id: UNKNOWN_ID },
      ]) {
        await expect(
          getApp().rpc.request(AccountsSubjects.getSmtpCredential, ref),
        ).rejects.toMatchObject({
          code: AccountsErrorCode.SmtpCredentialNotFound,
          message: 'smtp credential not found',
        });
      }
    });
  });

  describe('verifySmtpLogin', () => {
    it('verifies the password and answers the account status and lowercase domains', async () => {
      const accountId = await newAccountId();
      const domain = await getApp().createDomain(accountId);
      const created = await create(accountId, {
        name: 's',
        scope: 'scoped',
        domains: [domain.domain],
      });

      await expect(verify(created.username, created.password, freshAddress())).resolves.toEqual({
        credential_id: created.id,
        account_id: accountId,
        account_status: 'active',
        scope: 'scoped',
        domains: [domain.domain],
        sandbox: false,
      });
    });

    it('refuses a wrong password, an unknown username and a deleted credential alike', async () => {
      const accountId = await newAccountId();
      const created = await create(accountId, { name: 'v', scope: 'global' });
      const invalid = {
        code: AccountsErrorCode.SmtpLoginInvalid,
        message: 'invalid username or password',
      };

      await expect(
        verify(created.username, `${created.password}x`, freshAddress()),
      ).rejects.toMatchObject(invalid);
      await expect(
        verify('envoi-smtp-nobody', created.password, freshAddress()),
      ).rejects.toMatchObject(invalid);

      await getApp().rpc.request(AccountsSubjects.deleteSmtpCredential, {
        account_id: accountId,
        credential_id: created.id,
      });
      await expect(
        verify(created.username, created.password, freshAddress()),
      ).rejects.toMatchObject(invalid);
    });

    it('answers a suspended account as such, and refuses a deleted account', async () => {
      const accountId = await newAccountId();
      const created = await create(accountId, { name: 'v', scope: 'global' });

      await getApp().dataSource.query(
        'UPDATE accounts.accounts SET suspended_at = now() WHERE id = $1',
        [accountId],
      );
      await expect(
        verify(created.username, created.password, freshAddress()),
      ).resolves.toMatchObject({
        account_status: 'suspended',
      });

      await getApp().dataSource.query(
        'UPDATE accounts.accounts SET deleted_at = now() WHERE id = $1',
        [accountId],
      );
      await expect(
        verify(created.username, created.password, freshAddress()),
      ).rejects.toMatchObject({
        code: AccountsErrorCode.SmtpLoginInvalid,
      });
    });

    it('throttles an address after too many failures, without checking the password', async () => {
      const max = getApp().config.SMTP_LOGIN_FAILURES_MAX;
      const created = await create(await newAccountId(), { name: 't', scope: 'global' });
      const attacker = freshAddress();
      const throttled = { code: AccountsErrorCode.SmtpLoginThrottled };

      for (let attempt = 0; attempt < max; attempt++) {
        await expect(verify(`envoi-smtp-guess${attempt}`, 'wrong', attacker)).rejects.toMatchObject(
          {
            code: AccountsErrorCode.SmtpLoginInvalid,
          },
        );
      }
      // Even the right password is refused from the blocked address...
      await expect(verify(created.username, created.password, attacker)).rejects.toMatchObject(
        throttled,
      );
      // ...while the same credential still logs in from another one.
      await expect(
        verify(created.username, created.password, freshAddress()),
      ).resolves.toMatchObject({
        credential_id: created.id,
      });
    });

    it('throttles a username failing from many addresses; a success elsewhere resets nothing', async () => {
      const max = getApp().config.SMTP_LOGIN_FAILURES_MAX;
      const created = await create(await newAccountId(), { name: 'u', scope: 'global' });
      const guesser = freshAddress();

      for (let attempt = 0; attempt < max - 1; attempt++) {
        await expect(
          verify(created.username, `wrong${attempt}`, freshAddress()),
        ).rejects.toMatchObject({
          code: AccountsErrorCode.SmtpLoginInvalid,
        });
      }
      await expect(verify(created.username, 'wrong', guesser)).rejects.toMatchObject({
        code: AccountsErrorCode.SmtpLoginInvalid,
      });
      await expect(
        verify(created.username, created.password, freshAddress()),
      ).rejects.toMatchObject({
        code: AccountsErrorCode.SmtpLoginThrottled,
      });
    });
  });

  describe('failed-login purge', () => {
    it('forgets counts whose window and block have run out, and keeps the others', async () => {
      const windowMs = getApp().config.SMTP_LOGIN_FAILURE_WINDOW_MS;
      const old = new Date(Date.now() - windowMs - 60_000);
      const subjects = ['username:purge-old', 'username:purge-blocked', 'username:purge-fresh'];
      await getApp().dataSource.query(
        `INSERT INTO accounts.smtp_login_failures (subject, window_started_at, failures, blocked_until)
         VALUES ($1, $4, 3, NULL), ($2, $4, 10, now() + interval '1 hour'), ($3, now(), 1, NULL)`,
        [...subjects, old],
      );

      await getApp().app.get(SmtpLoginFailuresPurgeService).purge({ stopping: false });

      const rows: Array<{ subject: string }> = await getApp().dataSource.query(
        'SELECT subject FROM accounts.smtp_login_failures WHERE subject = ANY($1) ORDER BY subject',
        [subjects],
      );
      expect(rows.map((row) => row.subject)).toEqual([
        'username:purge-blocked',
        'username:purge-fresh',
      ]);
    });
  });

  describe('smtpCredentialChanged', () => {
    let recorder: EventRecorder<SmtpCredentialChangedEvent>;

    beforeEach(async () => {
      recorder = new EventRecorder(getApp().connection, AccountsSubjects.smtpCredentialChanged);
      await getApp().connection.flush();
    });

    afterEach(() => {
      recorder.stop();
    });

    it('is broadcast on create and on delete', async () => {
      const accountId = await newAccountId();
      const created = await create(accountId, { name: 'b', scope: 'global' });
      await getApp().rpc.request(AccountsSubjects.deleteSmtpCredential, {
        account_id: accountId,
        credential_id: created.id,
      });

      const expected = {
        credential_id: created.id,
        account_id: accountId,
        username: created.username,
      };
      const events = await pollUntil(
        () => recorder.events.filter((event) => event.credential_id === created.id),
        (found) => found.length === 2,
        { what: 'smtpCredentialChanged after create and delete' },
      );
      expect(events).toEqual([expected, expected]);
    });
  });
});

function withoutPassword(
  created: CreatedSmtpCredentialRecord,
): Omit<CreatedSmtpCredentialRecord, 'password'> {
  const record: Partial<CreatedSmtpCredentialRecord> = { ...created };
  delete record.password;
  return record as Omit<CreatedSmtpCredentialRecord, 'password'>;
}
