import { setTimeout as delay } from 'node:timers/promises';

import {
  AccountsErrorCode,
  AccountsSubjects,
  SMTP_LOGIN_FIELD_MAX,
  type VerifiedSmtpLogin,
} from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';
import { MessagesErrorCode } from '@envoi/contracts-messages';
import { RpcError } from '@envoi/shared-nats';
import type {
  SMTPServerAddress,
  SMTPServerAuthentication,
  SMTPServerDataStream,
  SMTPServerSession,
} from 'smtp-server';

import type { BusRequester } from './bus-requester';
import type { LoginCache } from './login-cache';
import type { SmtpReply } from './replies';
import { Replies, TemporaryReplies } from './replies';
import type { SenderAuthorizer } from './sender-authorizer';
import type { Submitter } from './submitter';

export interface SessionLimits {
  maxMessageBytes: number;
  maxTransactionsPerConnection: number;
  /** The delay after a connection's first failed AUTH; it doubles with each further one. */
  authFailureDelayMs: number;
  /** The longest delay after a failed AUTH. */
  authFailureDelayMaxMs: number;
}

export interface SessionDependencies {
  bus: BusRequester;
  logins: LoginCache;
  senders: SenderAuthorizer;
  submitter: Submitter;
  limits: SessionLimits;
  /** Waits before a failed AUTH is answered (a fake clock in unit tests). */
  sleep?: (ms: number) => Promise<void>;
}

interface SessionState {
  login?: VerifiedSmtpLogin & { username: string };
  failedLogins: number;
  /** MAIL FROM commands the connection has issued. */
  transactions: number;
}

/** The ESMTP parameters of MAIL FROM that the server advertises; RCPT TO takes none (no DSN). */
const MAIL_PARAMETERS = new Set(['BODY', 'SIZE', 'SMTPUTF8']);

/**
 * What a submission session decides at AUTH, MAIL FROM, RCPT TO and DATA: smtp-server parses
 * the protocol and calls these. A refusal is an SmtpReply, whose text carries its enhanced code.
 */
export class SubmissionSession {
  private readonly states = new Map<string, SessionState>();
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly deps: SessionDependencies) {
    this.sleep = deps.sleep ?? ((ms) => delay(ms));
  }

  /** Sessions open on this replica. */
  get openSessions(): number {
    return this.states.size;
  }

  opened(session: SMTPServerSession): void {
    this.states.set(session.id, { failedLogins: 0, transactions: 0 });
  }

  closed(session: SMTPServerSession): void {
    this.states.delete(session.id);
  }

  async authenticate(
    auth: SMTPServerAuthentication,
    session: SMTPServerSession,
  ): Promise<{ user: string } | SmtpReply> {
    const state = this.state(session);
    const username = auth.username ?? '';
    const password = auth.password ?? '';
    let verified: VerifiedSmtpLogin | undefined;
    try {
      if (isPresentable(auth, username, password)) {
        verified = await this.deps.logins.login(username, password, () =>
          this.deps.bus.request(AccountsSubjects.verifySmtpLogin, {
            username,
            password,
            ...remoteAddressOf(session),
          }),
        );
      }
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
      if (error.hasCode(AccountsErrorCode.SmtpLoginThrottled)) return Replies.authThrottled();
      if (!error.hasCode(AccountsErrorCode.SmtpLoginInvalid))
        return TemporaryReplies.authUnavailable();
    }
    if (!verified) {
      state.failedLogins += 1;
      await this.sleep(this.failureDelay(state.failedLogins));
      return Replies.authInvalid();
    }
    if (verified.account_status !== 'active') return Replies.accountDisabled();
    state.login = { ...verified, username };
    return { user: username };
  }

  async mailFrom(
    address: SMTPServerAddress,
    session: SMTPServerSession,
  ): Promise<SmtpReply | null> {
    const state = this.state(session);
    const login = state.login;
    if (!login) return Replies.sendingRefused('Authentication required');
    state.transactions += 1;
    if (state.transactions > this.deps.limits.maxTransactionsPerConnection) {
      return Replies.tooManyTransactions();
    }
    const unknown = unknownParameter(address, MAIL_PARAMETERS);
    if (unknown) return Replies.parameterNotRecognized(unknown);
    if (address.address === '') return Replies.nullSenderRefused();
    const domain = domainOf(address.address);
    // A reply is an Error (its stack taken when made): made only for a refusal.
    const refused = () => Replies.senderNotAllowed(login.username, login.account_id);
    if (login.scope === 'scoped' && !login.domains.includes(domain)) return refused();
    try {
      return (await this.deps.senders.mayUse(login.account_id, domain)) ? null : refused();
    } catch (error) {
      if (error instanceof RpcError) return Replies.temporaryFailure();
      throw error;
    }
  }

  rcptTo(address: SMTPServerAddress): SmtpReply | null {
    const unknown = unknownParameter(address, new Set());
    return unknown ? Replies.parameterNotRecognized(unknown) : null;
  }

  async data(
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
  ): Promise<string | SmtpReply> {
    const raw = await readBounded(stream, this.deps.limits.maxMessageBytes);
    if (raw === null || stream.sizeExceeded) {
      return Replies.messageTooBig(this.deps.limits.maxMessageBytes);
    }
    const login = this.state(session).login;
    const { mailFrom, rcptTo, bodyType } = session.envelope;
    if (!login || !mailFrom) return Replies.temporaryFailure();
    try {
      const result = await this.deps.submitter.submit(
        {
          account_id: login.account_id,
          credential_id: login.credential_id,
          credential_sandbox: login.sandbox,
          ...(login.scope === 'scoped' ? { credential_domains: login.domains } : {}),
          envelope_from: mailFrom.address,
          recipients: rcptTo.map((recipient) => recipient.address),
          ...remoteAddressOf(session),
          ...(bodyType ? { body_type: bodyType.toUpperCase() } : {}),
        },
        raw,
      );
      return TemporaryReplies.queuedAs(result.message_id_header);
    } catch (error) {
      if (error instanceof RpcError) return submissionRefusal(error);
      throw error;
    }
  }

  private state(session: SMTPServerSession): SessionState {
    let state = this.states.get(session.id);
    if (!state) {
      state = { failedLogins: 0, transactions: 0 };
      this.states.set(session.id, state);
    }
    return state;
  }

  private failureDelay(failures: number): number {
    const { authFailureDelayMs, authFailureDelayMaxMs } = this.deps.limits;
    return Math.min(authFailureDelayMaxMs, authFailureDelayMs * 2 ** Math.min(failures - 1, 20));
  }
}

/** The reply to each refusal of an accept request; any other error is temporary (451). */
const SUBMISSION_REFUSALS: Readonly<Record<string, (message: string) => SmtpReply>> = {
  [MessagesErrorCode.SubmissionSenderNotAllowed]: Replies.sendingRefused,
  [MessagesErrorCode.SenderDomainNotOwned]: Replies.sendingRefused,
  [MessagesErrorCode.SenderDomainNotVerified]: Replies.sendingRefused,
  [MessagesErrorCode.SubmissionMalformed]: Replies.malformed,
  [MessagesErrorCode.InvalidMessage]: Replies.malformed,
  [CommonErrorCode.ValidationFailed]: Replies.malformed,
  [MessagesErrorCode.SubmissionControlHeaderInvalid]: Replies.controlHeaderInvalid,
  [MessagesErrorCode.SubmissionAccountDisabled]: () => Replies.accountDisabled(),
};

function submissionRefusal(error: RpcError): SmtpReply {
  const refusal = SUBMISSION_REFUSALS[error.code];
  return refusal ? refusal(error.message) : Replies.temporaryFailure();
}

/** PLAIN and LOGIN with a username and a password the accounts service would look at. */
function isPresentable(
  auth: SMTPServerAuthentication,
  username: string,
  password: string,
): boolean {
  if (auth.method !== 'PLAIN' && auth.method !== 'LOGIN') return false;
  if (auth.authzid && auth.authzid !== username) return false;
  const fits = (value: string) => value.length > 0 && value.length <= SMTP_LOGIN_FIELD_MAX;
  return fits(username) && fits(password);
}

export function unknownParameter(
  address: SMTPServerAddress,
  allowed: ReadonlySet<string>,
): string | null {
  if (!address.args) return null;
  return Object.keys(address.args).find((name) => !allowed.has(name.toUpperCase())) ?? null;
}

function remoteAddressOf(session: SMTPServerSession): { remote_address?: string } {
  return session.remoteAddress ? { remote_address: session.remoteAddress } : {};
}

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * The stream's bytes, or null once they pass `maxBytes` (the rest is read and dropped). Read with
 * its events: no async iterator and its promises per chunk.
 */
function readBounded(stream: SMTPServerDataStream, maxBytes: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (bytes: Buffer) => {
      size += bytes.length;
      if (size <= maxBytes) chunks.push(bytes);
    });
    stream.once('error', reject);
    stream.once('end', () => resolve(size > maxBytes ? null : Buffer.concat(chunks, size)));
  });
}
