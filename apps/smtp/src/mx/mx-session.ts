import { randomUUID } from 'node:crypto';

import type { InboundEnvelope, InboundSpoolRef } from '@envoi/contracts-routes';
import type { InboundLimits } from '@envoi/shared-inbound-mail';
import { RpcError } from '@envoi/shared-nats';
import type { SMTPServerAddress, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';

import { Replies, type SmtpReply } from '../submission/replies';
import { unknownParameter } from '../submission/submission-session';
import { checkContent } from './content-check';
import {
  type AcceptedRecipient,
  inboundPublications,
  inlineBytes,
  receptionHeadline,
} from './inbound-events';
import type { InboundPublication, InboundSpool } from './inbound-spool';
import { readMessage } from './message-reader';
import { classifyRecipient, type PlatformMailboxes } from './mx-recipients';
import { acceptedAs, MxReplies } from './mx-replies';
import type { ReturnPathHosts } from './return-path-hosts';
import type { RouteSets } from './route-sets';

export interface MxLimits {
  maxMessageBytes: number;
  /** Longest line of a message, without its CRLF (RFC 5322: 998). */
  maxLineOctets: number;
  /** Publications of one event before the client gets 451 (the same id each time). */
  publishAttempts: number;
  /** Bounds of the content check every message passes before it is spooled (MIME bombs). */
  content: InboundLimits;
}

export interface MxDependencies {
  routes: Pick<RouteSets, 'match'>;
  returnPathHosts: Pick<ReturnPathHosts, 'isVerified'>;
  spool: Pick<InboundSpool, 'refOf' | 'store' | 'publish'>;
  mailboxes: PlatformMailboxes;
  limits: MxLimits;
  newId?: () => string;
  now?: () => Date;
}

/** ESMTP parameters of MAIL FROM the MX advertises; RCPT TO takes none. */
const MAIL_PARAMETERS = new Set(['BODY', 'SIZE', 'SMTPUTF8']);

/**
 * What the MX decides at MAIL FROM, RCPT TO and DATA. Any sender is welcome (bounces come from
 * `<>`); a recipient is accepted only when it is a platform mailbox (VERP bounce, feedback) or
 * an enabled route takes it; DATA is answered 250 only once the message passes the content
 * bounds and its events (carrying its bytes, or naming its spool, then stored) are acknowledged
 * by JetStream.
 */
export class MxSession {
  /** Per session: the accepted recipients of the transaction, by the address smtp-server keeps. */
  private readonly transactions = new Map<string, Map<string, AcceptedRecipient>>();
  private readonly newId: () => string;
  private readonly now: () => Date;

  constructor(private readonly deps: MxDependencies) {
    this.newId = deps.newId ?? randomUUID;
    this.now = deps.now ?? (() => new Date());
  }

  closed(session: SMTPServerSession): void {
    this.transactions.delete(session.id);
  }

  mailFrom(address: SMTPServerAddress, session: SMTPServerSession): SmtpReply | null {
    const unknown = unknownParameter(address, MAIL_PARAMETERS);
    if (unknown) return Replies.parameterNotRecognized(unknown);
    this.transactions.set(session.id, new Map());
    return null;
  }

  async rcptTo(address: SMTPServerAddress, session: SMTPServerSession): Promise<SmtpReply | null> {
    const unknown = unknownParameter(address, new Set());
    if (unknown) return Replies.parameterNotRecognized(unknown);
    const accepted = await this.accept(address.address);
    if (!('kind' in accepted)) return accepted;
    let transaction = this.transactions.get(session.id);
    if (!transaction) {
      transaction = new Map();
      this.transactions.set(session.id, transaction);
    }
    transaction.set(address.address, accepted);
    return null;
  }

  async data(
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
  ): Promise<string | SmtpReply> {
    const { maxMessageBytes, maxLineOctets } = this.deps.limits;
    const read = await readMessage(stream, maxMessageBytes, maxLineOctets);
    if (read.outcome === 'too_big' || stream.sizeExceeded) {
      return Replies.messageTooBig(maxMessageBytes);
    }
    if (read.outcome === 'line_too_long') return MxReplies.lineTooLong(maxLineOctets);
    const transaction = this.transactions.get(session.id);
    const { mailFrom, rcptTo } = session.envelope;
    const recipients = rcptTo.flatMap((recipient) => {
      const accepted = transaction?.get(recipient.address);
      return accepted ? [accepted] : [];
    });
    if (!mailFrom || recipients.length === 0) return Replies.temporaryFailure();
    const content = await checkContent(read.bytes, this.deps.limits.content);
    if ('refusal' in content) return content.refusal;
    const inboundId = this.newId();
    const spool = this.deps.spool.refOf(inboundId, read.bytes);
    const envelope: InboundEnvelope = {
      inbound_id: inboundId,
      received_at: this.now().toISOString(),
      remote_address: session.remoteAddress,
      helo: session.hostNameAppearsAs ?? '',
      tls: session.secure,
      envelope_from: mailFrom.address,
      size: read.bytes.length,
      spool,
    };
    const headline = receptionHeadline(content.headline, mailFrom.address);
    const inline = inlineBytes(read.bytes);
    const publications = inboundPublications(envelope, recipients, headline, inline);
    await this.storeDurably(spool, read.bytes, publications);
    return acceptedAs(inboundId);
  }

  /**
   * Resolves once the spool (when an event names it) and every event are acknowledged. The
   * events whose consumers do not read the spool at once go out with it (one round trip to
   * JetStream); the others once it is stored. Rejects with the first failure, once nothing is in
   * flight any more.
   */
  private async storeDurably(
    spool: InboundSpoolRef,
    bytes: Buffer,
    publications: readonly InboundPublication[],
  ): Promise<void> {
    const spooled = publications.some((publication) => publication.spool !== 'none');
    const afterTheSpool = publications.filter(
      (publication) => publication.spool === 'read_at_once',
    );
    const withTheSpool = publications.filter((publication) => publication.spool !== 'read_at_once');
    const storing = spooled ? this.deps.spool.store(spool, bytes) : Promise.resolve();
    const outcomes = await Promise.allSettled([
      storing.then(() => this.publishAll(afterTheSpool)),
      this.publishAll(withTheSpool),
    ]);
    const failure = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failure) throw failure.reason;
  }

  private async publishAll(publications: readonly InboundPublication[]): Promise<void> {
    await Promise.all(publications.map((publication) => this.publish(publication)));
  }

  /** The recipient as accepted, or the refusal. */
  private async accept(address: string): Promise<AcceptedRecipient | SmtpReply> {
    const recipient = classifyRecipient(address, this.deps.mailboxes);
    switch (recipient.kind) {
      case 'refused':
        return MxReplies.relayingDenied();
      case 'bounce':
      case 'feedback':
        return recipient;
      case 'verp':
        return this.verpBounce(recipient);
      case 'candidate':
        return this.route(recipient.address);
    }
  }

  /** A bounce on a domain's verified return-path host; otherwise an address like any other. */
  private async verpBounce(recipient: {
    address: string;
    messageUuid: string;
    host: string;
  }): Promise<AcceptedRecipient | SmtpReply> {
    let verified: boolean;
    try {
      verified = await this.deps.returnPathHosts.isVerified(recipient.host);
    } catch (error) {
      if (error instanceof RpcError) return Replies.temporaryFailure();
      throw error;
    }
    if (!verified) return this.route(recipient.address);
    return { kind: 'bounce', address: recipient.address, messageUuid: recipient.messageUuid };
  }

  private async route(address: string): Promise<AcceptedRecipient | SmtpReply> {
    try {
      const match = await this.deps.routes.match(address);
      switch (match.outcome) {
        case 'route':
          return {
            kind: 'routed',
            address,
            accountId: match.account_id,
            routeIds: match.route_ids,
          };
        case 'unknown_recipient':
          return MxReplies.unknownRecipient();
        case 'not_routed':
          return MxReplies.relayingDenied();
      }
    } catch (error) {
      if (error instanceof RpcError) return Replies.temporaryFailure();
      throw error;
    }
  }

  private async publish(publication: InboundPublication): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.deps.spool.publish(publication);
        return;
      } catch (error) {
        if (attempt >= this.deps.limits.publishAttempts) throw error;
      }
    }
  }
}
