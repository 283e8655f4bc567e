import type {
  AcceptSubmissionResult,
  CreateMessageResult,
  SendContext,
} from '@envoi/contracts-messages';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

import { MessagesConfig } from '../messages.config';
import { MessagesException } from '../messages/messages.exception';
import {
  type AcceptedReply,
  type AcceptedRequest,
  AcceptedRequestsRepository,
} from './accepted-requests.repository';

function isCreatedList(reply: AcceptedReply): reply is CreateMessageResult {
  return 'object' in reply;
}

function isSubmissionResult(reply: AcceptedReply): reply is AcceptSubmissionResult {
  return 'messages' in reply;
}

/** The key was committed by a concurrent send while this one was being prepared. */
class KeyTakenMeanwhile extends Error {
  constructor() {
    super('the idempotency key was committed by a concurrent send');
    this.name = 'KeyTakenMeanwhile';
  }
}

/**
 * A send under an `Idempotency-Key` is committed once per account and key: the key goes into the
 * send's own transaction, so a retry after a reply that never reached the gateway (a crash, a
 * timeout) answers the committed send, with the same ids, instead of sending a copy.
 */
@Injectable()
export class AcceptedRequests {
  private readonly windowMs: number;

  constructor(
    private readonly records: AcceptedRequestsRepository,
    config: MessagesConfig,
  ) {
    this.windowMs = config.IDEMPOTENCY_TTL_MS;
  }

  /**
   * The reply of the send already committed under the request's key, or else `accept`'s; a
   * concurrent send that commits the key first wins and both answer its reply.
   */
  once(
    request: SendContext,
    accept: () => Promise<CreateMessageResult>,
  ): Promise<CreateMessageResult> {
    return this.onceAs(request, accept, isCreatedList);
  }

  /**
   * {@link once} for an SMTP submission (keyed by its submission id), without a look-up first:
   * almost every submission is new, and one that is not fails to claim its key when it commits
   * (see claimStatement). Any failure, that one or a refusal by checks that have changed since
   * the committed attempt, answers the committed reply when there is one.
   */
  async onceSubmitted(
    request: SendContext,
    accept: () => Promise<AcceptSubmissionResult>,
  ): Promise<AcceptSubmissionResult> {
    try {
      return await accept();
    } catch (error) {
      const committed = await this.earlierReply(request, isSubmissionResult);
      if (committed) return committed;
      throw error;
    }
  }

  private async onceAs<R extends AcceptedReply>(
    request: SendContext,
    accept: () => Promise<R>,
    isReply: (reply: AcceptedReply) => reply is R,
  ): Promise<R> {
    if (request.idempotency === undefined) return accept();
    const earlier = await this.earlierReply(request, isReply);
    if (earlier) return earlier;
    try {
      return await accept();
    } catch (error) {
      if (!(error instanceof KeyTakenMeanwhile)) throw error;
      const winner = await this.earlierReply(request, isReply);
      if (!winner) throw error;
      return winner;
    }
  }

  /** Inside the send's transaction, before its rows: rolls it back when the key is taken. */
  async record(manager: EntityManager, request: SendContext, reply: AcceptedReply): Promise<void> {
    const idempotency = request.idempotency;
    if (idempotency === undefined) return;
    const owner = { accountId: request.account_id, key: idempotency.key };
    const accepted: AcceptedRequest = { fingerprint: idempotency.fingerprint, reply };
    if (!(await this.records.insert(manager, owner, accepted, this.windowMs))) {
      throw new KeyTakenMeanwhile();
    }
  }

  /**
   * The statement recording the key of a submission (unique to it, never reused past the window),
   * to run as part of the one statement that stores it; undefined without a key.
   */
  claimStatement(
    request: SendContext,
    reply: AcceptedReply,
  ): { sql: string; parameters: unknown[] } | undefined {
    const idempotency = request.idempotency;
    if (idempotency === undefined) return undefined;
    return this.records.claimStatement(
      { accountId: request.account_id, key: idempotency.key },
      { fingerprint: idempotency.fingerprint, reply },
    );
  }

  /** Deletes up to `limit` records past the window; returns how many. */
  purgeExpired(limit: number): Promise<number> {
    return this.records.purgeExpired(limit, this.windowMs);
  }

  /** A reply of another kind under the key (an API send's where a submission's is due) is a reuse. */
  private async earlierReply<R extends AcceptedReply>(
    request: SendContext,
    isReply: (reply: AcceptedReply) => reply is R,
  ): Promise<R | undefined> {
    const idempotency = request.idempotency;
    if (idempotency === undefined) return undefined;
    const owner = { accountId: request.account_id, key: idempotency.key };
    const accepted = await this.records.findLive(owner, this.windowMs);
    if (accepted === null) return undefined;
    if (accepted.fingerprint !== idempotency.fingerprint || !isReply(accepted.reply)) {
      throw MessagesException.idempotencyKeyReused();
    }
    return accepted.reply;
  }
}
