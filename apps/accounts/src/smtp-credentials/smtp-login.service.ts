import type { VerifiedSmtpLogin, VerifySmtpLoginRequest } from '@envoi/contracts-accounts';
import { Injectable } from '@nestjs/common';

import { AccountsConfig } from '../accounts.config';
import { SmtpCredentialsException } from './smtp-credentials.exception';
import { SmtpCredentialsRepository } from './smtp-credentials.repository';
import { SmtpLoginFailuresRepository } from './smtp-login-failures.repository';
import { isBlocked, type ThrottleSettings } from './smtp-login-throttle';
import { UNMATCHABLE_SMTP_PASSWORD_HASH, verifySmtpPassword } from './smtp-password';

/** The subjects failures are counted for: the username, and the client's address when known. */
export function failureSubjects(request: VerifySmtpLoginRequest): string[] {
  const subjects = [`username:${request.username}`];
  if (request.remote_address) subjects.push(`address:${request.remote_address.toLowerCase()}`);
  return subjects;
}

/**
 * SMTP AUTH (platform notes 3.2, reliability plan item 33). An unknown username costs the same
 * scrypt as a wrong password, and every refusal is the same error. Failures are counted per
 * username and per remote address; once either is blocked, logins are refused unchecked. A
 * success resets nothing, so it cannot clear the count of an address guessing other passwords.
 */
@Injectable()
export class SmtpLoginService {
  private readonly throttle: ThrottleSettings;

  constructor(
    private readonly credentials: SmtpCredentialsRepository,
    private readonly failures: SmtpLoginFailuresRepository,
    config: AccountsConfig,
  ) {
    this.throttle = {
      maxFailures: config.SMTP_LOGIN_FAILURES_MAX,
      windowMs: config.SMTP_LOGIN_FAILURE_WINDOW_MS,
      blockMs: config.SMTP_LOGIN_BLOCK_MS,
    };
  }

  async verify(request: VerifySmtpLoginRequest): Promise<VerifiedSmtpLogin> {
    const subjects = failureSubjects(request);
    const counts = await this.failures.find(subjects);
    if (counts.some((count) => isBlocked(count, new Date()))) {
      throw SmtpCredentialsException.loginThrottled();
    }
    const login = await this.credentials.findLogin(request.username);
    const matches = await verifySmtpPassword(
      request.password,
      login?.password_hash ?? UNMATCHABLE_SMTP_PASSWORD_HASH,
    );
    // A deleted account's credentials no longer log in (its other statuses are the edge's 521).
    if (!login || !matches || login.account_status === 'deleted') {
      await this.failures.recordFailure(subjects, new Date(), this.throttle);
      throw SmtpCredentialsException.loginInvalid();
    }
    return {
      credential_id: login.credential_id,
      account_id: login.account_id,
      account_status: login.account_status,
      scope: login.scope,
      domains: login.domains.map((domain) => domain.toLowerCase()),
      sandbox: login.sandbox,
    };
  }
}
