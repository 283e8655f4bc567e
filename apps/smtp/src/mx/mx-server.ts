import type { Logger } from '@envoi/shared-observability';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';

import { Replies, type SmtpReply } from '../submission/replies';
import { adaptConnectionReplies } from '../submission/reply-adapter';
import type { SubmissionServerSettings } from '../submission/submission-server';
import type { MxSession } from './mx-session';
import { denyRoutedOrQuotedRecipients } from './relay-syntax';

/** The MX takes the submission server's settings (its own size and recipient limits). */
export type MxServerSettings = SubmissionServerSettings;

/** Longest command line, as on submission. */
const MAX_COMMAND_OCTETS = 1000;

/**
 * The MX listener: STARTTLS offered and never required, no AUTH, no reverse DNS lookup, the
 * submission server's limits (line length, idle timeout, connections per address, early talkers
 * dropped by smtp-server), and the MX session's decisions.
 */
export class MxServer {
  private server: SMTPServer | undefined;

  constructor(
    private readonly settings: MxServerSettings,
    private readonly session: MxSession,
    private readonly logger: Logger,
  ) {}

  async listen(host: string, port: number): Promise<void> {
    const server = new SMTPServer(this.options());
    server.on('error', (error) => this.logger.warn({ err: error }, 'mx connection error'));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      const net = server.listen(port, host, () => {
        net.off('error', reject);
        resolve();
      });
      net.once('error', reject);
    });
  }

  get connections(): number {
    return this.server?.connections.size ?? 0;
  }

  /** Stops accepting connections; sessions in flight get the drain time. */
  async close(): Promise<void> {
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(resolve));
  }

  private options(): SMTPServerOptions {
    const { settings, session } = this;
    return {
      key: settings.tls.key,
      cert: settings.tls.cert,
      name: settings.hostname,
      banner: 'Envoi ESMTP MX',
      size: settings.maxMessageBytes,
      authOptional: true,
      disabledCommands: ['AUTH'],
      hideENHANCEDSTATUSCODES: false,
      hideDSN: true,
      hideREQUIRETLS: true,
      disableReverseLookup: true,
      maxRecipients: settings.maxRecipients,
      maxCommandLength: MAX_COMMAND_OCTETS,
      socketTimeout: settings.idleTimeoutMs,
      closeTimeout: Math.max(1, settings.drainMs),
      logger: false,
      onConnect: (smtpSession, done) => done(this.admit(smtpSession)),
      onClose: (smtpSession) => session.closed(smtpSession),
      onMailFrom: (address, smtpSession, done) => done(session.mailFrom(address, smtpSession)),
      onRcptTo: (address, smtpSession, done) => {
        session.rcptTo(address, smtpSession).then(
          (refusal) => done(refusal),
          (error: unknown) => done(this.unexpected(error)),
        );
      },
      onData: (stream, smtpSession, done) => {
        session.data(stream, smtpSession).then(
          (outcome) => (typeof outcome === 'string' ? done(null, outcome) : done(outcome)),
          (error: unknown) => done(this.unexpected(error)),
        );
      },
    };
  }

  /** Every reply goes through the adapter; too many connections are refused with 421. */
  private admit(smtpSession: SMTPServerSession): SmtpReply | null {
    const connections = [...(this.server?.connections ?? [])];
    const connection = connections.find((candidate) => candidate.id === smtpSession.id);
    if (connection) {
      denyRoutedOrQuotedRecipients(connection);
      adaptConnectionReplies(connection);
    }
    if (connections.length > this.settings.maxConnections) return Replies.tooManyConnections();
    const fromAddress = connections.filter(
      (other) => other.remoteAddress === smtpSession.remoteAddress,
    ).length;
    return fromAddress > this.settings.maxConnectionsPerIp
      ? Replies.tooManyConnectionsFromAddress()
      : null;
  }

  private unexpected(error: unknown): SmtpReply {
    this.logger.error({ err: error }, 'mx session handler failed');
    return Replies.temporaryFailure();
  }
}
