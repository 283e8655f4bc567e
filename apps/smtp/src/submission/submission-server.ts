import type { Logger } from '@envoi/shared-observability';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';

import { guardCommands, MAX_AUTH_LINE_OCTETS } from './command-guard';
import { Replies, type SmtpReply } from './replies';
import { adaptConnectionReplies } from './reply-adapter';
import type { SubmissionSession } from './submission-session';

export interface SubmissionServerSettings {
  hostname: string;
  tls: { cert: string; key: string };
  maxMessageBytes: number;
  maxRecipients: number;
  idleTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** On close: how long sessions in flight may go on. */
  drainMs: number;
}

export interface Listener {
  port: number;
  /** TLS from the first byte (465) rather than STARTTLS. */
  implicitTls: boolean;
}

const MAX_UNAUTHENTICATED_COMMANDS = 10;

/**
 * The submission listeners (one smtp-server per port): STARTTLS before AUTH, AUTH before MAIL,
 * limits of platform notes 3.2, no reverse DNS lookup, and the session's decisions.
 */
export class SubmissionServer {
  private readonly servers: SMTPServer[] = [];

  constructor(
    private readonly settings: SubmissionServerSettings,
    private readonly session: SubmissionSession,
    private readonly logger: Logger,
  ) {}

  async listen(host: string, listeners: readonly Listener[]): Promise<void> {
    for (const listener of listeners) {
      const server = new SMTPServer(this.options(listener.implicitTls));
      watchNewConnections(server);
      server.on('error', (error) => this.logger.warn({ err: error }, 'smtp connection error'));
      this.servers.push(server);
      await new Promise<void>((resolve, reject) => {
        const net = server.listen(listener.port, host, () => {
          net.off('error', reject);
          resolve();
        });
        net.once('error', reject);
      });
    }
  }

  /** Sessions open on this replica, over every listener. */
  get connections(): number {
    return this.servers.reduce((sum, server) => sum + server.connections.size, 0);
  }

  /**
   * Stops accepting connections; open sessions finish the transaction in flight (a later command
   * gets 421), and those still open after the drain time are closed with 421.
   */
  async close(): Promise<void> {
    await Promise.all(
      this.servers.map((server) => new Promise<void>((resolve) => server.close(resolve))),
    );
  }

  private options(implicitTls: boolean): SMTPServerOptions {
    const { settings, session } = this;
    return {
      secure: implicitTls,
      key: settings.tls.key,
      cert: settings.tls.cert,
      name: settings.hostname,
      banner: 'Envoi ESMTP submission',
      size: settings.maxMessageBytes,
      authMethods: ['PLAIN', 'LOGIN'],
      authRequiredMessage: '5.7.0 Authentication required',
      disabledCommands: [],
      hideENHANCEDSTATUSCODES: false,
      hideDSN: true,
      hideREQUIRETLS: true,
      disableReverseLookup: true,
      maxRecipients: settings.maxRecipients,
      maxCommandLength: MAX_AUTH_LINE_OCTETS,
      maxAllowedUnauthenticatedCommands: MAX_UNAUTHENTICATED_COMMANDS,
      socketTimeout: settings.idleTimeoutMs,
      closeTimeout: Math.max(1, settings.drainMs),
      logger: false,
      onConnect: (smtpSession, done) => {
        const refusal = this.admit(smtpSession);
        if (refusal) return done(refusal);
        session.opened(smtpSession);
        done();
      },
      onClose: (smtpSession) => session.closed(smtpSession),
      onAuth: (auth, smtpSession, done) => {
        session.authenticate(auth, smtpSession).then(
          (outcome) => ('user' in outcome ? done(null, outcome) : done(outcome)),
          (error: unknown) => done(this.unexpected(error)),
        );
      },
      onMailFrom: (address, smtpSession, done) => {
        session.mailFrom(address, smtpSession).then(
          (refusal) => done(refusal),
          (error: unknown) => done(this.unexpected(error)),
        );
      },
      onRcptTo: (address, _session, done) => done(session.rcptTo(address)),
      onData: (stream, smtpSession, done) => {
        session.data(stream, smtpSession).then(
          (outcome) => (typeof outcome === 'string' ? done(null, outcome) : done(outcome)),
          (error: unknown) => done(this.unexpected(error)),
        );
      },
    };
  }

  /** Too many connections are refused with 421. */
  private admit(smtpSession: SMTPServerSession): SmtpReply | null {
    if (this.connections > this.settings.maxConnections) return Replies.tooManyConnections();
    let fromAddress = 0;
    for (const candidate of this.servers) {
      for (const other of candidate.connections) {
        if (other.remoteAddress === smtpSession.remoteAddress) fromAddress += 1;
      }
    }
    return fromAddress > this.settings.maxConnectionsPerIp
      ? Replies.tooManyConnectionsFromAddress()
      : null;
  }

  private unexpected(error: unknown): SmtpReply {
    this.logger.error({ err: error }, 'smtp session handler failed');
    return Replies.temporaryFailure();
  }
}

/**
 * Every new connection, before it reads a byte: its replies go through the adapter and its
 * command lines through the guard.
 */
function watchNewConnections(server: SMTPServer): void {
  const connect = server.connect.bind(server);
  server.connect = (socket, socketOptions) => {
    connect(socket, socketOptions);
    for (const connection of server.connections) {
      if (connection._socket !== socket) continue;
      adaptConnectionReplies(connection);
      guardCommands(connection);
    }
  };
}
