import type { RpcErrorBody } from '@envoi/contracts-core';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsIP,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  MaxLength,
  ValidateNested,
} from 'class-validator';

import { EMAIL_MAX_LENGTH } from './limits';
import { UploadRef } from './requests';

/** RCPT commands one SMTP transaction may carry (platform notes 3.2). */
export const SUBMISSION_RECIPIENTS_MAX = 50;
/** The raw message travels inline (base64) up to this many bytes, above it through the upload bucket. */
export const SUBMISSION_INLINE_MAX_BYTES = 256 * 1024;

/**
 * One SMTP DATA transaction from the submission server: each recipient becomes its own message
 * through the same accept rules as the API (suppression check, sender rules, credit), with the
 * client's MIME kept as sent. The messages service reads and strips the control headers
 * (platform notes 3.2), checks the From header against the credential, keeps a client
 * Message-ID on the sender's domain (else sets one), and commits before it replies.
 *
 * Exactly one of `raw_base64` and `upload` is set. `upload` is an object in
 * MESSAGE_UPLOADS_BUCKET holding the raw bytes themselves (not JSON).
 */
export class AcceptSubmissionRequest {
  @IsUUID() account_id!: string;
  @IsUUID() credential_id!: string;
  /** The credential's own sandbox flag: a sandbox credential always simulates. */
  @IsBoolean() credential_sandbox!: boolean;
  /** The credential's domains when it is scoped (lowercase); absent for a global credential. */
  @IsOptional() @IsArray() @IsString({ each: true }) credential_domains?: string[];

  /** The MAIL FROM address (already checked by the edge). */
  @IsString() @Length(3, EMAIL_MAX_LENGTH) envelope_from!: string;
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SUBMISSION_RECIPIENTS_MAX)
  @IsString({ each: true })
  @MaxLength(EMAIL_MAX_LENGTH, { each: true })
  recipients!: string[];

  @IsOptional() @IsString() raw_base64?: string;
  @IsOptional() @ValidateNested() @Type(() => UploadRef) upload?: UploadRef;

  /**
   * The edge's id of this transaction (unique per DATA): a re-sent request after a lost reply
   * answers the committed messages instead of storing copies.
   */
  @IsString() @Length(1, 128) submission_id!: string;
  @IsOptional() @IsIP() remote_address?: string;
  /** The ESMTP BODY parameter, kept for the audit trail; the bytes are stored as received. */
  @IsOptional() @IsIn(['7BIT', '8BITMIME', 'BINARYMIME']) body_type?: string;
}

/** One recipient's outcome: `queued` (committed) or `error` (e.g. suppressed, with the reason). */
export interface SubmittedMessageRecord {
  recipient: string;
  /** `<uuid@domain>`; null when not sent. */
  id: string | null;
  status: 'queued' | 'error';
  error: string | null;
}

export interface AcceptSubmissionResult {
  /** The Message-ID header of the stored mail (the client's, or the one the platform set). */
  message_id_header: string;
  messages: SubmittedMessageRecord[];
}

/** Submissions one acceptSubmissions request carries at most. */
export const SUBMISSIONS_PER_BATCH_MAX = 16;

/**
 * Several DATA transactions of one smtp replica in one request: each entry an
 * AcceptSubmissionRequest, checked and accepted on its own (a bad entry gets its own error).
 */
export class AcceptSubmissionsRequest {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SUBMISSIONS_PER_BATCH_MAX)
  @IsObject({ each: true })
  submissions!: object[];
}

/** One entry's outcome: what acceptSubmission would have answered, or its error. */
export type AcceptSubmissionOutcome = { result: AcceptSubmissionResult } | { error: RpcErrorBody };

export interface AcceptSubmissionsResult {
  /** In the order of the request's submissions. */
  outcomes: AcceptSubmissionOutcome[];
}
