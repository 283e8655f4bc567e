import { randomUUID } from 'node:crypto';

import { normalizeDomainName, validatePayload } from '@envoi/contracts-core';
import {
  type AddressBody,
  CONVERSATION_ADDRESSES_MAX,
  CreateConversationBody,
  type CreateConversationRequest,
  type CreatedMessageRecord,
  CreateMessageBody,
  type CreateMessageRequest,
  type CreateMessageResult,
  INLINE_PAYLOAD_MAX_BYTES,
  MESSAGE_MAX_BYTES,
  type MessageReceptionEvent,
  MessagesStreamSubjects,
  SEND_MAX_BYTES,
  type SendContext,
  type SendOptionsBody,
  SUBMISSION_INLINE_MAX_BYTES,
  type UploadRef,
} from '@envoi/contracts-messages';
import {
  attachmentBytes,
  type ComposeAddress,
  composedSizeUpperBound,
  type ComposeInput,
  composeMime,
  ContentRuleError,
  mergeSubstitutions,
  type PreparedMessage,
  type RecipientPart,
  renderTemplatesBatch,
  type SendSources,
  StoredComposer,
  TemplateRenderError,
  type TrackedLink,
} from '@envoi/shared-composition';
import { preparedQuery } from '@envoi/shared-database';
import { NATS_CONNECTION, takeUpload, UploadUnavailableError } from '@envoi/shared-nats';
import {
  enqueueOutboxStatement,
  type OutboxEntry,
  outboxEntry,
  OutboxRelayService,
} from '@envoi/shared-outbox';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { NatsConnection } from 'nats';
import { DataSource, type EntityManager } from 'typeorm';

import type { AcceptedReply } from '../accepted-requests/accepted-requests.repository';
import { AcceptedRequests } from '../accepted-requests/accepted-requests.service';
import { checkContentRules, customHeaders } from '../composition';
import { CreditReservations, creditUsedUp } from '../credit/credit-reservations.repository';
import { AccountDefaultsService } from '../senders/account-defaults.service';
import {
  type AuthorizedSender,
  SenderAuthorizations,
} from '../senders/sender-authorizations.service';
import { ControlHeaderError, withHeaderControls } from '../submissions/control-headers';
import { TrackingRepository } from '../tracking/tracking.repository';
import { deliveryChunks, firstDeliveryJob } from './delivery-chunks';
import type { GroupCommits } from './group-commits';
import { combinedInsertStatement, type InsertStatement, rowArraysStatement } from './insert-rows';
import type { MessageKind } from './message.entity';
import { messageIdHeader, messageIdHeaderKey, uuidv7, uuidv7s } from './message-ids';
import { MessagesException } from './messages.exception';
import {
  type MessageRecipientRow,
  type MessageSharedRow,
  MessagesRepository,
} from './messages.repository';
import { receptionBatchEntries } from './reception-batches';
import { checkSchedule, type EffectiveOptions, effectiveOptions } from './send-options';
import { type SendAttachmentRow, type SendRow, SendsRepository } from './sends.repository';
import { composedSizeBound, type SizeParts } from './size-bound';
import { submissionCommits } from './submission-commits';
import { suppressedAtAcceptEntries } from './suppressed-at-accept';
import { SuppressionChecks, suppressionKey } from './suppression-checks.service';

/** A larger submission goes alone: a group's statement carries every message of the group. */
function isGroupable(submitted: Submitted): boolean {
  return submitted.raw.length <= SUBMISSION_INLINE_MAX_BYTES;
}

/** The text fields templates apply to. */
interface Content {
  subject: string;
  text?: string;
  html?: string;
  amp?: string;
}

/** What every message of one send shares. */
interface SendSetting {
  accountId: string;
  sender: AuthorizedSender;
  options: EffectiveOptions;
  suppressed: Map<string, string>;
  /** Messages per billing period; 0: no cap. */
  monthlyCredit: number;
  now: Date;
}

/** What storing a send needs besides its messages. */
interface StoredSend {
  request: SendContext;
  body: SendOptionsBody;
  setting: SendSetting;
  sources: SendSources;
  /** Per message when templated, else the first one standing for all. */
  prepared: PreparedMessage[];
  /** A `message.suppressed` per recipient suppressed at accept, published with the send. */
  suppressed: OutboxEntry[];
  /** A send submitted over SMTP: its raw message, and the reply its idempotency record keeps. */
  submitted?: Submitted;
  /**
   * Committed with the submissions that come together (see commitGrouped): its reception events
   * travel in the group's `message.reception_batch` stream messages, not in their own.
   */
  grouped: boolean;
}

/** What a send submitted over SMTP adds to storing it. */
interface Submitted {
  /** The message every recipient is delivered, as stored. */
  raw: Buffer;
  /** Its Message-ID header, as delivered. */
  messageIdHeader: string;
  /** The reply recorded under its key (the submission's own, not the API's list). */
  recorded: (reply: CreateMessageResult) => AcceptedReply;
}

/**
 * A send submitted over SMTP, read by the submissions module: `body` carries its From address,
 * subject and options (control headers, the credential's sandbox); each recipient becomes a
 * message whose content is `raw`.
 */
export interface SubmittedSend extends Submitted {
  request: SendContext;
  body: SendOptionsBody;
  recipients: string[];
}

/** What storing a send's recipients gives: their drafts, their answers and the suppressed ones. */
interface PerRecipient {
  drafts: Draft[];
  data: CreatedMessageRecord[];
  suppressed: string[];
}

/** One message about to be stored: its row, what it adds to its send and what announces it. */
interface Draft {
  id: string;
  header: string;
  /** The recipient shown in lists and events (a conversation's first one), as given. */
  recipient: string;
  /** Lowercase, without duplicates: where it is delivered. */
  envelope: string[];
  /** Its subject and contents, rendered. */
  content: Content;
  part: RecipientPart;
}

/** The address alone (a request's address may carry substitutions too). */
function plainAddress(address: AddressBody): ComposeAddress {
  return { email: address.email, ...(address.name !== undefined ? { name: address.name } : {}) };
}

/** What the send's messages share: stored once, composed per message when read. */
function sendSources(
  setting: SendSetting,
  body: SendOptionsBody,
  kind: MessageKind,
  templated: boolean,
  addressed: { to: AddressBody[]; cc?: AddressBody[] } | undefined,
  substitutions?: Record<string, unknown>,
): SendSources {
  return {
    kind,
    acceptedAt: setting.now,
    from: plainAddress(body.from),
    ...(body.reply_to ? { replyTo: plainAddress(body.reply_to) } : {}),
    ...(addressed ? { to: addressed.to.map(plainAddress) } : {}),
    ...(addressed?.cc ? { cc: addressed.cc.map(plainAddress) } : {}),
    templates: contentOf(body),
    headers: customHeaders(body),
    ...(templated && substitutions !== undefined ? { substitutions } : {}),
    templated,
    attachments: body.attachments ?? [],
  };
}

function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
}

function contentOf(body: SendOptionsBody): Content {
  return {
    subject: body.subject,
    ...(body.text_content !== undefined ? { text: body.text_content } : {}),
    ...(body.html_content !== undefined ? { html: body.html_content } : {}),
    ...(body.amp_content !== undefined ? { amp: body.amp_content } : {}),
  };
}

/** A v1 send with the control headers of its `content.headers` applied (platform notes 3.2). */
function v1Body(body: CreateMessageBody): CreateMessageBody {
  try {
    return withHeaderControls(body);
  } catch (error) {
    if (error instanceof ControlHeaderError) throw MessagesException.invalid(error.message);
    throw error;
  }
}

/** Spec 4.2 rules 1, 4, 5 and the header rules, as the composition module states them. */
function applyContentRules(body: SendOptionsBody, kind: MessageKind): void {
  try {
    checkContentRules(body, kind);
  } catch (error) {
    if (error instanceof ContentRuleError) throw MessagesException.invalid(error.message);
    throw error;
  }
}

/** Composition's own header checks (defence in depth) are content rules too: 400s. */
function asContentRuleAnswer(error: unknown): unknown {
  return error instanceof ContentRuleError ? MessagesException.invalid(error.message) : error;
}

/** The MIME message. */
async function compose(input: ComposeInput): Promise<Buffer> {
  try {
    return await composeMime(input);
  } catch (error) {
    throw asContentRuleAnswer(error);
  }
}

/** An upper bound of the message's size when it can be had without composing it. */
function sizeUpperBound(input: ComposeInput): number | undefined {
  try {
    return composedSizeUpperBound(input);
  } catch (error) {
    throw asContentRuleAnswer(error);
  }
}

/**
 * Each draft's MIME message, one at a time so that a request over the limits stops before it
 * holds them all: at most MESSAGE_MAX_BYTES each and SEND_MAX_BYTES together. The exact check,
 * for when the bounds of {@link checkSizes} do not settle it.
 */
async function composeWithinLimits(
  drafts: readonly Draft[],
  inputOf: (draft: Draft) => ComposeInput,
): Promise<void> {
  let total = 0;
  for (const draft of drafts) {
    const size = (await compose(inputOf(draft))).length;
    if (size > MESSAGE_MAX_BYTES) {
      throw MessagesException.invalid(
        `the message to ${draft.recipient} is ${size} bytes once encoded; at most ${MESSAGE_MAX_BYTES} bytes are accepted`,
      );
    }
    total += size;
    if (total > SEND_MAX_BYTES) {
      throw MessagesException.invalid(
        `the messages of this request come to more than ${SEND_MAX_BYTES} bytes once encoded; send them in several requests with fewer recipients`,
      );
    }
  }
}

function utf8Bytes(value: string | undefined): number {
  return value === undefined ? 0 : Buffer.byteLength(value, 'utf8');
}

/**
 * Whether every message fits the limits, given `size`, at least the size of the first one
 * composed: the others are bounded from it (see composedSizeBound).
 */
function boundsFit(
  drafts: readonly Draft[],
  prepared: (index: number) => PreparedMessage | undefined,
  representative: PreparedMessage,
  size: number,
): boolean {
  const partsOf = (draft: Draft, index: number): SizeParts => {
    const input = prepared(index)?.input;
    return {
      to: input?.to ?? [draft.part.recipient],
      ...(input?.cc ? { cc: input.cc } : {}),
      content: draft.content,
      trackedHtmlBytes: utf8Bytes((input ?? representative.input).html),
    };
  };
  const [first, ...others] = drafts;
  if (!first) return true;
  const given = partsOf(first, 0);
  let total = size;
  let fits = size <= MESSAGE_MAX_BYTES && total <= SEND_MAX_BYTES;
  for (let index = 0; fits && index < others.length; index += 1) {
    const other = others[index];
    if (!other) break;
    const bound = composedSizeBound(size, given, partsOf(other, index + 1));
    total += bound;
    fits = bound <= MESSAGE_MAX_BYTES && total <= SEND_MAX_BYTES;
  }
  return fits;
}

/**
 * The size limits without composing every message: the first one is bounded without composing
 * when its shape allows (composedSizeUpperBound), else composed (its content rules checked on
 * the way), and the others bounded from it. When a bound does not fit, the messages are composed
 * and measured one by one instead, so a request is refused only for its real sizes, with the
 * same answers as before.
 */
async function checkSizes(
  drafts: readonly Draft[],
  prepared: (index: number) => PreparedMessage | undefined,
  inputOf: (draft: Draft) => ComposeInput,
): Promise<void> {
  const representative = prepared(0);
  if (drafts.length === 0 || !representative) return;
  const upperBound = sizeUpperBound(representative.input);
  if (upperBound !== undefined && boundsFit(drafts, prepared, representative, upperBound)) return;
  const size = (await compose(representative.input)).length;
  if (!boundsFit(drafts, prepared, representative, size))
    await composeWithinLimits(drafts, inputOf);
}

/**
 * Renders the templates once per recipient (recipient substitutions over global ones); a failure
 * names the field and, when there are several, the recipient.
 */
function renderEach(
  content: Content,
  substitutions: Record<string, unknown>[],
  positions: number[],
): Content[] {
  try {
    return renderTemplatesBatch(content, substitutions, { always: true });
  } catch (error) {
    if (!(error instanceof TemplateRenderError)) throw error;
    const position = error.index === undefined ? undefined : positions[error.index];
    throw MessagesException.template(
      position === undefined || positions.length === 1
        ? error.message
        : `recipients[${position}]: ${error.message}`,
    );
  }
}

/** Echoed as given; `schedule` only when the request had one (spec 2.2). */
function scheduleEcho(body: SendOptionsBody): Pick<CreatedMessageRecord, 'schedule'> {
  const schedule = body.schedule;
  if (schedule === undefined) return {};
  return {
    schedule: {
      ...(schedule.first_attempt !== undefined ? { first_attempt: schedule.first_attempt } : {}),
      ...(schedule.expires !== undefined ? { expires: schedule.expires } : {}),
    },
  };
}

type RecipientEcho = CreatedMessageRecord['recipient'];

function echoOf(address: AddressBody & { substitutions?: Record<string, unknown> }): RecipientEcho {
  return {
    email: address.email,
    name: address.name ?? '',
    ...(address.substitutions !== undefined ? { substitutions: address.substitutions } : {}),
  };
}

function suppressedEntry(
  recipient: RecipientEcho,
  reason: string,
  body: SendOptionsBody,
): CreatedMessageRecord {
  return {
    object: 'message',
    id: null,
    recipient,
    status: 'error',
    error: reason === '' ? 'recipient is suppressed' : `recipient is suppressed: ${reason}`,
    ...scheduleEcho(body),
  };
}

/** A recipient beyond the account's monthly credit: not accepted, and told why. */
function creditRefusedEntry(
  entry: CreatedMessageRecord,
  monthlyCredit: number,
): CreatedMessageRecord {
  return { ...entry, id: null, status: 'error', error: creditUsedUp(monthlyCredit) };
}

function acceptedEntry(
  recipient: RecipientEcho,
  draft: Draft,
  options: EffectiveOptions,
  body: SendOptionsBody,
): CreatedMessageRecord {
  return {
    object: 'message',
    id: draft.header,
    recipient,
    status: options.firstAttemptAt ? 'scheduled' : 'queued',
    error: null,
    ...scheduleEcho(body),
  };
}

/**
 * The answer must fit a NATS reply: per-recipient substitutions are echoed only while it does
 * (a send large enough to come as an upload could otherwise not be answered).
 */
function fitReply(data: CreatedMessageRecord[]): CreateMessageResult {
  const result: CreateMessageResult = { object: 'list', data };
  // Without substitutions to leave out there is nothing to measure.
  if (!data.some((entry) => entry.recipient.substitutions !== undefined)) return result;
  if (Buffer.byteLength(JSON.stringify(result), 'utf8') <= INLINE_PAYLOAD_MAX_BYTES) return result;
  return {
    object: 'list',
    data: data.map((entry) => ({
      ...entry,
      recipient: { email: entry.recipient.email, name: entry.recipient.name },
    })),
  };
}

/**
 * Accepts sends (spec 2.1, 2.2, 4.2): validates, authorizes the sender domain, applies the
 * account's defaults, drops suppressed recipients, renders each message (its template errors
 * are 400s) and checks the size limits, then commits the send once, every message's own part,
 * its reception event and its delivery job in one transaction (messages are composed from the
 * send whenever they are read or delivered). A reply means everything is committed; the relay publishes from there.
 */
@Injectable()
export class AcceptService {
  private readonly logger = new Logger(AcceptService.name);
  /** Submissions committed together when they come together (see GroupCommits). */
  private readonly submissionCommits: GroupCommits<readonly MessageReceptionEvent[]>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly messages: MessagesRepository,
    private readonly tracking: TrackingRepository,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly senders: SenderAuthorizations,
    private readonly accounts: AccountDefaultsService,
    private readonly suppressions: SuppressionChecks,
    private readonly outbox: OutboxRelayService,
    private readonly sends: SendsRepository,
    private readonly composer: StoredComposer,
    private readonly acceptedRequests: AcceptedRequests,
    private readonly credits: CreditReservations,
  ) {
    this.submissionCommits = submissionCommits(
      (statement) => preparedQuery(this.dataSource.manager, statement.sql, statement.parameters),
      (entries) => outboxRowsStatement(this.dataSource.manager, entries),
    );
  }

  /** One message per recipient, whose To holds that recipient only; once per idempotency key. */
  createMessage(request: CreateMessageRequest): Promise<CreateMessageResult> {
    return this.acceptedRequests.once(request, () => this.acceptMessage(request));
  }

  /** One message to to, cc and bcc together; once per idempotency key. */
  createConversation(request: CreateConversationRequest): Promise<CreateMessageResult> {
    return this.acceptedRequests.once(request, () => this.acceptConversation(request));
  }

  private async acceptMessage(request: CreateMessageRequest): Promise<CreateMessageResult> {
    const read = await this.readBody(request, CreateMessageBody);
    const body = request.api === 'v1' ? v1Body(read) : read;
    const now = new Date();
    applyContentRules(body, 'message');
    const setting = await this.setting(
      request.account_id,
      body,
      body.recipients.map((recipient) => recipient.email),
      now,
    );
    // Content is a template only when substitutions are supplied (platform notes 3.8); v1 has none.
    const templated =
      request.api === 'v2' &&
      (body.substitutions !== undefined ||
        body.recipients.some((recipient) => recipient.substitutions !== undefined));
    const positions = body.recipients
      .map((recipient, index) => ({ recipient, index }))
      .filter(({ recipient }) => !setting.suppressed.has(suppressionKey(recipient.email)))
      .map(({ index }) => index);
    const given = contentOf(body);
    const contents = templated
      ? renderEach(
          given,
          positions.map((index) =>
            mergeSubstitutions(body.substitutions, body.recipients[index]?.substitutions),
          ),
          positions,
        )
      : positions.map(() => given);
    const { drafts, data, suppressed } = this.perRecipient(
      setting,
      body,
      body.recipients,
      positions.length,
      (index) => contents[index] ?? given,
      templated,
    );
    const sources = sendSources(setting, body, 'message', templated, undefined, body.substitutions);
    return this.store(request, body, setting, sources, drafts, data, suppressed);
  }

  /**
   * A send submitted over SMTP (see SubmissionAccept): the API's rules for its sender, its
   * recipients (suppression, credit) and its options, one message per recipient, each delivered
   * as the submitted raw message. Its caller runs it once per submission.
   */
  async acceptSubmitted(submitted: SubmittedSend): Promise<CreateMessageResult> {
    const { request, body, recipients } = submitted;
    const now = new Date();
    const setting = await this.setting(request.account_id, body, recipients, now);
    const deliverable = recipients.filter(
      (email) => !setting.suppressed.has(suppressionKey(email)),
    ).length;
    const given = contentOf(body);
    const { drafts, data, suppressed } = this.perRecipient(
      setting,
      body,
      recipients.map((email) => ({ email })),
      deliverable,
      () => given,
      false,
    );
    const sources = sendSources(setting, body, 'message', false, undefined);
    return this.store(request, body, setting, sources, drafts, data, suppressed, submitted);
  }

  /**
   * One message per recipient that is not suppressed (the n-th one with `contentAt(n)`), and each
   * recipient's answer in order; `deliverable`: how many are not suppressed.
   */
  private perRecipient(
    setting: SendSetting,
    body: SendOptionsBody,
    recipients: ReadonlyArray<AddressBody & { substitutions?: Record<string, unknown> }>,
    deliverable: number,
    contentAt: (index: number) => Content,
    templated: boolean,
  ): PerRecipient {
    const now = setting.now;
    const ids = uuidv7s(deliverable, now.getTime());
    const drafts: Draft[] = [];
    const data: CreatedMessageRecord[] = [];
    const suppressed: string[] = [];
    for (const recipient of recipients) {
      const echo = echoOf(recipient);
      const reason = setting.suppressed.get(suppressionKey(recipient.email));
      if (reason !== undefined) {
        data.push(suppressedEntry(echo, reason, body));
        suppressed.push(recipient.email);
        continue;
      }
      const draft = this.draft(
        setting,
        ids[drafts.length] ?? uuidv7(now.getTime()),
        contentAt(drafts.length),
        [recipient],
        templated ? recipient.substitutions : undefined,
      );
      drafts.push(draft);
      data.push(acceptedEntry(echo, draft, setting.options, body));
    }
    return { drafts, data, suppressed };
  }

  /** Bcc on the envelope only; no templating. */
  private async acceptConversation(
    request: CreateConversationRequest,
  ): Promise<CreateMessageResult> {
    const body = await this.readBody(request, CreateConversationBody);
    const now = new Date();
    applyContentRules(body, 'conversation');
    const addresses = [...body.to, ...(body.cc ?? []), ...(body.bcc ?? [])];
    if (addresses.length > CONVERSATION_ADDRESSES_MAX) {
      throw MessagesException.invalid(
        `to, cc and bcc together must not exceed ${CONVERSATION_ADDRESSES_MAX} addresses`,
      );
    }
    const setting = await this.setting(
      request.account_id,
      body,
      addresses.map((address) => address.email),
      now,
    );
    const deliverable = addresses.filter(
      (address) => !setting.suppressed.has(suppressionKey(address.email)),
    );
    const draft =
      deliverable.length === 0
        ? undefined
        : this.draft(setting, uuidv7(now.getTime()), contentOf(body), deliverable, undefined);
    const data = addresses.map((address) => {
      const reason = setting.suppressed.get(suppressionKey(address.email));
      return reason !== undefined || !draft
        ? suppressedEntry(echoOf(address), reason ?? '', body)
        : acceptedEntry(echoOf(address), draft, setting.options, body);
    });
    const sources = sendSources(setting, body, 'conversation', false, {
      to: body.to,
      ...(body.cc ? { cc: body.cc } : {}),
    });
    const suppressed = addresses
      .filter((address) => setting.suppressed.has(suppressionKey(address.email)))
      .map((address) => address.email);
    return this.store(request, body, setting, sources, draft ? [draft] : [], data, suppressed);
  }

  /**
   * The body, inline (validated by the transport's pipe, which made it an instance of its class)
   * or taken from the upload bucket and validated here (the upload bypasses the transport's
   * validation); a plain inline object, as a direct caller may pass, is validated here too.
   */
  private async readBody<T extends object>(
    request: { body?: T; upload?: UploadRef },
    bodyClass: new () => T,
  ): Promise<T> {
    if ((request.body === undefined) === (request.upload === undefined)) {
      throw MessagesException.invalid('exactly one of body and upload must be given');
    }
    if (request.body instanceof bodyClass) return request.body;
    let plain: unknown = request.body;
    if (request.upload !== undefined) {
      let bytes: Buffer;
      try {
        bytes = await takeUpload(this.connection, request.upload);
      } catch (error) {
        if (error instanceof UploadUnavailableError) {
          throw MessagesException.uploadUnavailable(error.message);
        }
        throw error;
      }
      try {
        plain = JSON.parse(bytes.toString('utf8'));
      } catch {
        throw MessagesException.invalid('invalid request body: not JSON');
      }
    }
    const validated = validatePayload(bodyClass, plain);
    if (!validated.ok) throw MessagesException.invalid(validated.message);
    return validated.value;
  }

  /**
   * Rule 6, then the answers every message of the send needs, asked together: the sender domain
   * (rule 2, which decides first), the account's defaults and the suppressed recipients.
   */
  private async setting(
    accountId: string,
    body: SendOptionsBody,
    emails: string[],
    now: Date,
  ): Promise<SendSetting> {
    const schedule = checkSchedule(body.schedule, now);
    const domain = emailDomain(body.from.email);
    const [sender, account, suppressed] = await Promise.allSettled([
      this.senders.authorize(accountId, domain),
      this.accounts.get(accountId),
      this.suppressions.suppressed(accountId, normalizeDomainName(domain), emails),
    ]);
    if (sender.status === 'rejected') throw sender.reason;
    if (account.status === 'rejected') throw account.reason;
    if (suppressed.status === 'rejected') throw suppressed.reason;
    return {
      accountId,
      sender: sender.value,
      options: effectiveOptions(body, account.value, schedule, now),
      suppressed: suppressed.value,
      monthlyCredit: account.value.monthlyCredit,
      now,
    };
  }

  private draft(
    setting: SendSetting,
    id: string,
    content: Content,
    envelope: AddressBody[],
    substitutions: Record<string, unknown> | undefined,
  ): Draft {
    const header = messageIdHeader(id, setting.sender.domain);
    const first = envelope[0];
    if (!first) throw new Error('a message needs a recipient');
    return {
      id,
      header,
      recipient: first.email,
      envelope: [...new Set(envelope.map((address) => address.email.toLowerCase()))],
      content,
      part: {
        id,
        messageIdHeader: header,
        recipient: plainAddress(first),
        ...(substitutions !== undefined ? { substitutions } : {}),
        tracking: { opens: setting.options.trackOpens, clicks: setting.options.trackClicks },
      },
    };
  }

  /**
   * Checks the sizes, then stores the messages: within the account's monthly credit when it has
   * one (see storeWithinCredit), else in one statement (see rowStatements), which is atomic on its
   * own, with a `message.suppressed` per suppressed recipient (alone when no message is left).
   * Under an API idempotency key it runs in a transaction after the key and its reply (first, so
   * that a concurrent duplicate waits for it); a submission claims its key in the statement
   * itself. Nothing is composed for storage: reads compose
   * from the send. Answers the reply.
   */
  private async store(
    request: SendContext,
    body: SendOptionsBody,
    setting: SendSetting,
    sources: SendSources,
    drafts: Draft[],
    data: CreatedMessageRecord[],
    suppressedRecipients: readonly string[],
    submitted?: Submitted,
  ): Promise<CreateMessageResult> {
    const suppressed = suppressedAtAcceptEntries({
      accountId: setting.accountId,
      domain: setting.sender.domain,
      from: body.from.email,
      subject: sources.templates.subject,
      recipients: suppressedRecipients,
      now: setting.now,
    });
    const recorded = submitted?.recorded ?? ((reply: CreateMessageResult) => reply);
    if (drafts.length === 0) {
      const reply = fitReply(data);
      // A submission is recorded under its key even when nothing is sent: a retry answers alike.
      if (suppressed.length > 0 || submitted) {
        const statements = [outboxRowsStatement(this.dataSource.manager, suppressed)];
        if (submitted && isGroupable(submitted)) {
          await this.commitGrouped(request, recorded(reply), statements, undefined);
        } else {
          await this.commit(request, recorded(reply), statements, submitted !== undefined);
        }
        this.outbox.notify();
      }
      return reply;
    }
    const prepared = submitted ? [] : await this.prepareWithinLimits(sources, drafts);
    const grouped =
      submitted !== undefined && setting.monthlyCredit === 0 && isGroupable(submitted);
    const stored: StoredSend = {
      request,
      body,
      setting,
      sources,
      prepared,
      suppressed,
      ...(submitted ? { submitted } : {}),
      grouped,
    };
    if (setting.monthlyCredit > 0) return this.storeWithinCredit(stored, drafts, data, recorded);
    const reply = fitReply(data);
    const statements = this.rowStatements(stored, drafts);
    if (grouped) {
      await this.commitGrouped(
        request,
        recorded(reply),
        statements,
        receptionEvents(setting, body, drafts),
      );
    } else {
      await this.commit(request, recorded(reply), statements, submitted !== undefined);
    }
    this.accepted(stored, drafts);
    return reply;
  }

  /**
   * Each message prepared for composition (tracked, its links found), and the size limits checked.
   * Templated messages differ in content, so each one is tracked (and its links stored) alone;
   * otherwise the first message stands for all.
   */
  private async prepareWithinLimits(
    sources: SendSources,
    drafts: Draft[],
  ): Promise<PreparedMessage[]> {
    const prepare = (draft: Draft) => this.composer.prepare(sources, draft.part, draft.content);
    const prepared = sources.templated ? drafts.map(prepare) : drafts.slice(0, 1).map(prepare);
    await checkSizes(
      drafts,
      (index) => prepared[index],
      (draft) => prepare(draft).input,
    );
    return prepared;
  }

  /**
   * Runs the send's statements as one, with its idempotency record when it has a key: a
   * submission's key, unique to it, is claimed in that statement; an API key is recorded first,
   * in a transaction.
   */
  private async commit(
    request: SendContext,
    reply: AcceptedReply,
    statements: InsertStatement[],
    submitted: boolean,
  ): Promise<void> {
    const claim = submitted ? this.acceptedRequests.claimStatement(request, reply) : undefined;
    const rows = combinedInsertStatement(claim ? [claim, ...statements] : statements);
    if (!rows) throw new Error('a send has rows to insert');
    // Its text depends only on which tables get rows and the number of attachments: prepared.
    if (request.idempotency === undefined || claim) {
      // One statement is atomic on its own: no BEGIN and COMMIT round trips.
      await preparedQuery(this.dataSource.manager, rows.sql, rows.parameters);
    } else {
      await this.dataSource.transaction(async (manager) => {
        await this.acceptedRequests.record(manager, request, reply);
        await preparedQuery(manager, rows.sql, rows.parameters);
      });
    }
  }

  /**
   * Commits a submission's statements, its key claimed in them, with the submissions that come
   * together (see GroupCommits); its reception events go in the group's reception batches.
   */
  private async commitGrouped(
    request: SendContext,
    reply: AcceptedReply,
    statements: InsertStatement[],
    receptions: readonly MessageReceptionEvent[] | undefined,
  ): Promise<void> {
    const claim = this.acceptedRequests.claimStatement(request, reply);
    await this.submissionCommits.commit(claim ? [claim, ...statements] : statements, receptions);
  }

  /**
   * A capped account's send: the credit is reserved in the transaction that stores the send, so
   * that concurrent sends (on any replica) never accept more than the credit; the recipients
   * beyond it get `error`, as suppressed ones do.
   */
  private async storeWithinCredit(
    stored: StoredSend,
    drafts: Draft[],
    data: CreatedMessageRecord[],
    recorded: (reply: CreateMessageResult) => AcceptedReply,
  ): Promise<CreateMessageResult> {
    const { request, setting } = stored;
    const { reply, kept } = await this.dataSource.transaction(async (manager) => {
      const granted = await this.credits.reserve(manager, {
        accountId: setting.accountId,
        at: setting.now,
        count: drafts.length,
        monthlyCredit: setting.monthlyCredit,
      });
      const kept = drafts.slice(0, granted);
      const refused = new Set(drafts.slice(granted).map((draft) => draft.header));
      const reply = fitReply(
        data.map((entry) =>
          entry.id !== null && refused.has(entry.id)
            ? creditRefusedEntry(entry, setting.monthlyCredit)
            : entry,
        ),
      );
      if (request.idempotency !== undefined) {
        await this.acceptedRequests.record(manager, request, recorded(reply));
      }
      const rows =
        kept.length > 0
          ? combinedInsertStatement(this.rowStatements(stored, kept))
          : stored.suppressed.length > 0
            ? enqueueOutboxStatement(manager, stored.suppressed)
            : undefined;
      if (rows) await preparedQuery(manager, rows.sql, rows.parameters);
      return { reply, kept };
    });
    if (kept.length > 0) this.accepted(stored, kept);
    else if (stored.suppressed.length > 0) this.outbox.notify();
    return reply;
  }

  /**
   * The links every message of a non-templated send tracks: its first prepared message's, or,
   * for a submitted send with click tracking, those of its raw message's HTML parts (the worker
   * tracks them the same way at delivery).
   */
  private sharedLinks(stored: StoredSend, drafts: Draft[]): TrackedLink[] {
    const { submitted, setting, prepared } = stored;
    const first = drafts[0];
    if (!submitted) return prepared[0]?.links ?? [];
    if (!setting.options.trackClicks || !first) return [];
    return this.composer.trackSubmitted(submitted.raw, first.id, { opens: false, clicks: true })
      .links;
  }

  /**
   * One INSERT per table, to run as one statement (each column one array parameter, expanded by
   * PostgreSQL): the send and its attachments, the messages, their tracked links, and the outbox
   * rows (reception events first unless the group's carry them, then the suppressed recipients'
   * events, then the delivery jobs, due at the first attempt).
   */
  private rowStatements(stored: StoredSend, drafts: Draft[]): InsertStatement[] {
    const { request, body, setting, sources, prepared } = stored;
    const { options, sender, now } = setting;
    const sendId = uuidv7(now.getTime());
    const send: SendRow = {
      id: sendId,
      accountId: setting.accountId,
      kind: sources.kind,
      api: request.api,
      acceptedAt: now,
      fromAddress: sources.from,
      replyTo: sources.replyTo ?? null,
      toAddresses: sources.to ?? null,
      ccAddresses: sources.cc ?? null,
      subject: sources.templates.subject,
      textContent: sources.templates.text ?? null,
      htmlContent: sources.templates.html ?? null,
      ampContent: sources.templates.amp ?? null,
      headers: sources.headers,
      substitutions: sources.substitutions ?? null,
      templated: sources.templated,
      rawContent: stored.submitted?.raw ?? null,
      messageIdHeader: stored.submitted
        ? messageIdHeaderKey(stored.submitted.messageIdHeader)
        : null,
      purgeAt: options.purgeContentAt,
      purgedAt: null,
      retainUntil: options.retainUntil,
    };
    const attachments = sources.attachments.map((attachment, position): SendAttachmentRow => ({
      sendId,
      position,
      fileName: attachment.file_name,
      contentType: attachment.content_type,
      contentId: attachment.content_id ?? null,
      contentDisposition: attachment.content_disposition ?? null,
      content: attachmentBytes(attachment),
    }));
    const chunks = deliveryChunks(drafts.map((draft) => draft.id));
    const shared: MessageSharedRow = {
      accountId: setting.accountId,
      domainId: sender.domainId,
      domain: sender.domain,
      kind: sources.kind,
      api: request.api,
      credentialId: request.credential_id ?? null,
      sender: body.from.email,
      tags: body.tags ?? [],
      status: options.firstAttemptAt ? 'Scheduled' : 'Received',
      sandbox: options.sandbox,
      sandboxResult: options.sandboxResult,
      trackOpens: options.trackOpens,
      trackClicks: options.trackClicks,
      retentionMetadataDays: options.metadataDays,
      retentionDataDays: options.dataDays,
      firstAttemptAt: options.firstAttemptAt,
      expiresAt: options.expiresAt,
      retainUntil: options.retainUntil,
      createdAt: now,
      updatedAt: now,
      sentAt: null,
      deliveredAt: null,
      numAttempts: 0,
      deliveryAttempts: [],
      openCount: 0,
      clickCount: 0,
      bounceClassification: null,
      sendId,
      contentPurgedAt: null,
    };
    const messages = drafts.map((draft): MessageRecipientRow => ({
      id: draft.id,
      recipient: draft.recipient,
      envelopeRecipients: draft.envelope,
      subject: draft.content.subject,
      messageIdHeader: draft.header,
      jobId: chunks.jobIdOf(draft.id),
      recipientName: draft.part.recipient.name ?? null,
      substitutions: draft.part.substitutions ?? null,
    }));
    const sendLinks = sources.templated
      ? []
      : this.sharedLinks(stored, drafts).map((link) => ({
          sendId,
          position: link.index,
          url: link.url,
        }));
    const messageLinks = sources.templated
      ? drafts.flatMap((draft, index) =>
          (prepared[index]?.links ?? []).map((link) => ({
            messageId: draft.id,
            position: link.index,
            url: link.url,
          })),
        )
      : [];
    const receptions = stored.grouped
      ? []
      : receptionBatchEntries(receptionEvents(setting, body, drafts));
    const jobs: OutboxEntry[] = chunks.jobs.map(({ id, messageIds }) =>
      outboxEntry(
        MessagesStreamSubjects.deliveryJobs,
        id,
        firstDeliveryJob(messageIds, setting.accountId),
        options.firstAttemptAt ?? undefined,
      ),
    );
    return [
      ...this.sends.insertStatements(send, attachments, sendLinks),
      this.messages.insertSendMessagesStatement(shared, messages),
      ...this.tracking.insertLinksStatements(messageLinks),
      outboxRowsStatement(this.dataSource.manager, [...receptions, ...stored.suppressed, ...jobs]),
    ];
  }

  private accepted({ setting, sources }: StoredSend, drafts: Draft[]): void {
    this.outbox.notify();
    this.logger.log(
      `accepted ${drafts.length} ${sources.kind}(s) from ${setting.sender.domain}: ${drafts[0]?.id ?? ''}${
        drafts.length > 1 ? ' …' : ''
      }`,
    );
  }
}

/**
 * The outbox rows' INSERT, one array parameter per column (see outboxInsertStatement): a group's
 * are merged into one.
 */
function outboxRowsStatement(
  manager: EntityManager,
  entries: readonly OutboxEntry[],
): InsertStatement {
  return rowArraysStatement(enqueueOutboxStatement(manager, entries));
}

/** The `message.reception` events of a send's messages, timestamped at its acceptance. */
function receptionEvents(
  setting: SendSetting,
  body: SendOptionsBody,
  drafts: readonly Draft[],
): MessageReceptionEvent[] {
  const timestamp = setting.now.toISOString();
  return drafts.map((draft) => receptionEvent(randomUUID(), timestamp, setting, body, draft));
}

/** The `message.reception` event (reference webhooks.yaml): always a message's first. */
function receptionEvent(
  id: string,
  timestamp: string,
  setting: SendSetting,
  body: SendOptionsBody,
  draft: Draft,
): MessageReceptionEvent {
  return {
    id,
    type: 'message.reception',
    timestamp,
    data: {
      account_id: setting.accountId,
      event: 'on_reception',
      from: body.from.email,
      recipient: draft.recipient,
      subject: draft.content.subject,
      message_id_header: draft.header,
      id: draft.id,
      is_bot: false,
    },
  };
}
