import { createHash } from 'node:crypto';

import { AccountsErrorCode } from '@envoi/contracts-accounts';
import { CodedError } from '@envoi/contracts-core';
import {
  type AcceptSubmissionRequest,
  type AcceptSubmissionResult,
  type CreateMessageResult,
  MESSAGE_MAX_BYTES,
  MessagesErrorCode,
  type SendContext,
  type SendOptionsBody,
  type SubmittedMessageRecord,
} from '@envoi/contracts-messages';
import { NATS_CONNECTION, takeUpload, UploadUnavailableError } from '@envoi/shared-nats';
import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from 'nats';

import { AcceptedRequests } from '../accepted-requests/accepted-requests.service';
import { isCreditRefusal } from '../credit/credit-reservations.repository';
import { AcceptService } from '../messages/accept.service';
import { MessagesException } from '../messages/messages.exception';
import { AccountDefaultsService } from '../senders/account-defaults.service';
import {
  controlFields,
  ControlHeaderError,
  type ControlOptions,
  readControlOptions,
} from './control-headers';
import { fieldsNamed, type HeaderBlock, readHeaderBlock } from './header-block';
import {
  parseSubmittedHeaders,
  submissionMessageId,
  type SubmittedHeaders,
} from './submitted-headers';
import { type AddedFields, messageIdDomain, submittedRaw } from './submitted-raw';

/** The sender refusals of the API's accept rules, answered with the SMTP refusal instead. */
const SENDER_REFUSALS: readonly string[] = [
  MessagesErrorCode.SenderDomainNotOwned,
  MessagesErrorCode.SenderDomainNotVerified,
];

/** The API's answer per recipient, as the submission answers it. */
function submittedRecord(entry: CreateMessageResult['data'][number]): SubmittedMessageRecord {
  return {
    recipient: entry.recipient.email,
    id: entry.id,
    status: entry.id === null ? 'error' : 'queued',
    error: entry.error,
  };
}

/** The submission's own context: its idempotency key is its submission id. */
function sendContext(request: AcceptSubmissionRequest): SendContext {
  const key = `smtp-submission:${request.submission_id}`;
  return {
    account_id: request.account_id,
    credential_id: request.credential_id,
    api: 'v2',
    idempotency: {
      key,
      fingerprint: createHash('sha256')
        .update(`smtp-submission\n${request.submission_id}`)
        .digest('hex'),
    },
  };
}

/**
 * Accepts one SMTP DATA transaction (MessagesSubjects.acceptSubmission): reads the client's
 * message, checks its From header against the credential and the account's domains, applies the
 * control headers (platform notes 3.2) and stores one message per recipient through the API's
 * accept rules, delivered as the submitted bytes (control headers stripped, a Message-ID and a
 * Date set when needed). Once per submission id; it answers only after the commit.
 */
@Injectable()
export class SubmissionAccept {
  constructor(
    private readonly accept: AcceptService,
    private readonly acceptedRequests: AcceptedRequests,
    private readonly accounts: AccountDefaultsService,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
  ) {}

  /** A submission whose every recipient is over the monthly credit is refused (its retry too). */
  async submit(request: AcceptSubmissionRequest): Promise<AcceptSubmissionResult> {
    const context = sendContext(request);
    const result = await this.acceptedRequests.onceSubmitted(context, () =>
      this.store(request, context),
    );
    const refused = result.messages.every((message) => message.status === 'error');
    const overCredit = result.messages.find((message) => isCreditRefusal(message.error));
    if (refused && overCredit) {
      throw MessagesException.submissionAccountDisabled(overCredit.error ?? '');
    }
    return result;
  }

  private async store(
    request: AcceptSubmissionRequest,
    context: SendContext,
  ): Promise<AcceptSubmissionResult> {
    const [original] = await Promise.all([
      this.rawOf(request),
      this.checkActive(request.account_id),
    ]);
    if (original.length > MESSAGE_MAX_BYTES) {
      throw MessagesException.submissionMalformed(
        `the message is larger than ${MESSAGE_MAX_BYTES} bytes`,
      );
    }
    const block = readHeaderBlock(original);
    if (!block) throw MessagesException.submissionMalformed('no parseable header block');
    const headers = parseSubmittedHeaders(original, block);
    if (!headers) throw MessagesException.submissionMalformed('no From header with an address');
    const domains = request.credential_domains;
    if (domains !== undefined && !domains.includes(headers.fromDomain)) {
      throw MessagesException.submissionSenderNotAllowed(request.credential_id, request.account_id);
    }
    const options = controlOptionsOf(block);
    const added = addedFields(request, block, headers.fromDomain);
    const messageIdHeader =
      added.messageIdHeader ?? fieldsNamed(block, 'message-id')[0]?.value ?? '';
    const recorded = (reply: CreateMessageResult): AcceptSubmissionResult => ({
      message_id_header: messageIdHeader,
      messages: reply.data.map(submittedRecord),
    });
    let reply: CreateMessageResult;
    try {
      reply = await this.accept.acceptSubmitted({
        request: context,
        body: submissionBody(headers, options, request.credential_sandbox),
        recipients: request.recipients,
        raw: submittedRaw(original, block, added),
        messageIdHeader,
        recorded,
      });
    } catch (error) {
      if (error instanceof CodedError && SENDER_REFUSALS.some((code) => error.hasCode(code))) {
        throw MessagesException.submissionSenderNotAllowed(
          request.credential_id,
          request.account_id,
        );
      }
      throw error;
    }
    return recorded(reply);
  }

  /** The raw message, inline or taken from the upload bucket (its size and digest checked). */
  private async rawOf(request: AcceptSubmissionRequest): Promise<Buffer> {
    const { raw_base64: inline, upload } = request;
    if (inline !== undefined && upload === undefined) return Buffer.from(inline, 'base64');
    if (upload === undefined || inline !== undefined) {
      throw MessagesException.invalid('exactly one of raw_base64 and upload must be given');
    }
    try {
      return await takeUpload(this.connection, upload);
    } catch (error) {
      if (error instanceof UploadUnavailableError) {
        throw MessagesException.uploadUnavailable(error.message);
      }
      throw error;
    }
  }

  /**
   * A suspended (or deleted) account sends nothing. Its status comes with its cached sending
   * settings, dropped on every replica as soon as the accounts service announces a change.
   */
  private async checkActive(accountId: string): Promise<void> {
    let status: string;
    try {
      status = (await this.accounts.get(accountId)).status;
    } catch (error) {
      if (!(error instanceof CodedError && error.hasCode(AccountsErrorCode.AccountNotFound))) {
        throw error;
      }
      status = 'unknown';
    }
    if (status !== 'active') {
      throw MessagesException.submissionAccountDisabled(`the account is ${status}`);
    }
  }
}

function controlOptionsOf(block: HeaderBlock): ControlOptions {
  try {
    return readControlOptions(controlFields(block));
  } catch (error) {
    if (error instanceof ControlHeaderError)
      throw MessagesException.controlHeaderInvalid(error.message);
    throw error;
  }
}

/**
 * The client's Message-ID is kept when it is on the sender's domain; otherwise (or without one)
 * the platform sets its own. A Date is added when there is none.
 */
function addedFields(
  request: AcceptSubmissionRequest,
  block: HeaderBlock,
  fromDomain: string,
): AddedFields {
  const given = fieldsNamed(block, 'message-id');
  const kept = given.length === 1 && messageIdDomain(given[0]?.value ?? '') === fromDomain;
  return {
    ...(kept
      ? {}
      : {
          messageIdHeader: submissionMessageId(
            request.account_id,
            request.submission_id,
            fromDomain,
          ),
        }),
    ...(fieldsNamed(block, 'date').length === 0 ? { date: new Date() } : {}),
  };
}

/** What the API's accept rules read of a send, from the submission. */
function submissionBody(
  headers: SubmittedHeaders,
  options: ControlOptions,
  credentialSandbox: boolean,
): SendOptionsBody {
  return {
    from: { email: headers.from },
    subject: headers.subject,
    ...options,
    ...(credentialSandbox ? { sandbox: true } : {}),
  };
}
