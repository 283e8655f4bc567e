import { randomUUID } from 'node:crypto';

import { CommonErrorCode } from '@envoi/contracts-core';
import {
  type AcceptSubmissionRequest,
  type AcceptSubmissionResult,
  MESSAGE_UPLOADS_BUCKET,
  SUBMISSION_INLINE_MAX_BYTES,
  type UploadRef,
} from '@envoi/contracts-messages';
import { RpcError } from '@envoi/shared-nats';

import type { BusRequester } from './bus-requester';
import { SubmissionBatches } from './submission-batches';

/** Stores raw bytes as object `name` of a bucket and says where they are. */
export type UploadWriter = (bucket: string, name: string, bytes: Uint8Array) => Promise<UploadRef>;

/** One DATA transaction: everything of the accept request but the message bytes and its id. */
export type Submission = Omit<AcceptSubmissionRequest, 'raw_base64' | 'upload' | 'submission_id'>;

/**
 * Hands a DATA transaction to the messages service (with those waiting alongside, see
 * SubmissionBatches) and answers once it is committed. A request
 * that timed out or found no responder is sent again with the same submission id, so a lost
 * reply answers the committed messages rather than storing copies. Large messages travel
 * through the upload bucket, written again before each attempt (a reader deletes what it took).
 */
export class Submitter {
  private readonly batches: SubmissionBatches;

  constructor(
    bus: BusRequester,
    private readonly upload: UploadWriter,
    private readonly attempts: number,
    private readonly newSubmissionId: () => string = randomUUID,
  ) {
    this.batches = new SubmissionBatches(bus);
  }

  async submit(submission: Submission, raw: Buffer): Promise<AcceptSubmissionResult> {
    const submissionId = this.newSubmissionId();
    for (let attempt = 1; ; attempt += 1) {
      try {
        const body = await this.messageBody(submissionId, raw);
        return await this.batches.submit({
          ...submission,
          ...body,
          submission_id: submissionId,
        });
      } catch (error) {
        const retryable = error instanceof RpcError && error.hasCode(CommonErrorCode.Unavailable);
        if (!retryable || attempt >= this.attempts) throw error;
      }
    }
  }

  private async messageBody(
    submissionId: string,
    raw: Buffer,
  ): Promise<Pick<AcceptSubmissionRequest, 'raw_base64' | 'upload'>> {
    if (raw.length <= SUBMISSION_INLINE_MAX_BYTES) return { raw_base64: raw.toString('base64') };
    return { upload: await this.upload(MESSAGE_UPLOADS_BUCKET, `smtp-${submissionId}`, raw) };
  }
}
