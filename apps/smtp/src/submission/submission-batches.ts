import { CommonErrorCode } from '@envoi/contracts-core';
import {
  type AcceptSubmissionOutcome,
  type AcceptSubmissionRequest,
  type AcceptSubmissionResult,
  MessagesSubjects,
  SUBMISSIONS_PER_BATCH_MAX,
} from '@envoi/contracts-messages';
import { RpcError } from '@envoi/shared-nats';

import type { BusRequester } from './bus-requester';

export interface SubmissionBatchLimits {
  /** Requests in flight at once. */
  lanes: number;
  /** Submissions per request. */
  maxSubmissions: number;
  /**
   * Inline message characters (base64) per request; a larger submission goes alone, and so does
   * one whose message is in the upload bucket (taking it would hold the others' replies).
   */
  maxInlineChars: number;
}

export const SUBMISSION_BATCH_LIMITS: SubmissionBatchLimits = {
  lanes: 2,
  maxSubmissions: SUBMISSIONS_PER_BATCH_MAX,
  // Well under NATS's default 1 MiB payload, with a few entries' other fields.
  maxInlineChars: 512 * 1024,
};

interface Waiting {
  request: AcceptSubmissionRequest;
  resolve: (result: AcceptSubmissionResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Hands submissions to the messages service in as few requests as keep it busy: one that finds
 * a lane idle goes at once; those that come while every lane has a request in flight wait for
 * the first lane to end, then go together (MessagesSubjects.acceptSubmissions). No delay when
 * idle, one request and one reply for many under load. Each caller gets its own entry's outcome;
 * a failed request (a timeout, no responder) fails each of its callers with its error.
 */
export class SubmissionBatches {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(
    private readonly bus: BusRequester,
    private readonly limits: SubmissionBatchLimits = SUBMISSION_BATCH_LIMITS,
  ) {}

  submit(request: AcceptSubmissionRequest): Promise<AcceptSubmissionResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      if (this.inFlight < this.limits.lanes) this.sendWaiting();
    });
  }

  private sendWaiting(): void {
    const batch = this.waiting.splice(0, this.fittingCount());
    if (batch.length === 0) return;
    this.inFlight += 1;
    void this.send(batch).finally(() => {
      this.inFlight -= 1;
      this.sendWaiting();
    });
  }

  /** How many of the first waiting submissions fit in one request (at least one). */
  private fittingCount(): number {
    let count = 0;
    let chars = 0;
    for (const { request } of this.waiting) {
      chars += request.upload ? this.limits.maxInlineChars + 1 : (request.raw_base64?.length ?? 0);
      if (
        count > 0 &&
        (count >= this.limits.maxSubmissions || chars > this.limits.maxInlineChars)
      ) {
        break;
      }
      count += 1;
    }
    return count;
  }

  private async send(batch: readonly Waiting[]): Promise<void> {
    try {
      const only = batch.length === 1 ? batch[0] : undefined;
      if (only) {
        only.resolve(await this.bus.request(MessagesSubjects.acceptSubmission, only.request));
        return;
      }
      const { outcomes } = await this.bus.request(MessagesSubjects.acceptSubmissions, {
        submissions: batch.map(({ request }) => request),
      });
      batch.forEach((caller, index) => settle(caller, outcomes[index]));
    } catch (error) {
      for (const caller of batch) caller.reject(error);
    }
  }
}

function settle(caller: Waiting, outcome: AcceptSubmissionOutcome | undefined): void {
  if (outcome === undefined) {
    caller.reject(new RpcError(CommonErrorCode.Internal, 'the batch answered no outcome for it'));
  } else if ('result' in outcome) {
    caller.resolve(outcome.result);
  } else {
    caller.reject(new RpcError(outcome.error.code, outcome.error.message));
  }
}
