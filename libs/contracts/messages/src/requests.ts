import {
  checkFastFirst,
  EmptyAsAbsent,
  NullAsAbsent,
  PageRequest,
  SkipWhenFastChecked,
  validatePayload,
} from '@envoi/contracts-core';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsEmail,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateNested,
  type ValidationOptions,
} from 'class-validator';

import {
  ATTACHMENTS_MAX,
  CONVERSATION_ADDRESSES_MAX,
  DISPLAY_NAME_MAX_LENGTH,
  EMAIL_MAX_LENGTH,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  RECIPIENTS_MAX,
  RECIPIENTS_MIN,
  RETENTION_DATA_DAYS,
  RETENTION_METADATA_DAYS,
  SUBJECT_MAX_LENGTH,
  TAG_MAX_LENGTH,
  TAGS_MAX,
} from './limits';
import { checkedRecipients } from './recipients-fast-check';

export const SANDBOX_RESULTS = ['deliver', 'bounce', 'defer', 'fail', 'suppress'] as const;
export type SandboxResult = (typeof SANDBOX_RESULTS)[number];

/** An object whose values are all strings (custom headers). */
export function IsStringMap(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStringMap',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          Object.values(value).every((entry) => typeof entry === 'string'),
        defaultMessage: () => '$property must be an object of string values',
      },
    },
    options,
  );
}

/** An email address with an optional display name (spec 2.1 Address). */
export class AddressBody {
  @IsEmail() @MaxLength(EMAIL_MAX_LENGTH) email!: string;
  @EmptyAsAbsent() @IsOptional() @IsString() @MaxLength(DISPLAY_NAME_MAX_LENGTH) name?: string;
}

/** A recipient and the substitutions that override the global ones (spec 2.1 Recipient). */
export class RecipientBody extends AddressBody {
  @NullAsAbsent() @IsOptional() @IsObject() substitutions?: Record<string, unknown>;
}

/** Spec 2.1 Attachment: `data` is UTF-8 text, or base64 when `base64` is true. */
export class AttachmentBody {
  @IsString() data!: string;
  @IsString() @Length(1, 255) content_type!: string;
  @IsString() @Length(1, 255) file_name!: string;
  @NullAsAbsent() @IsOptional() @IsBoolean() base64?: boolean;
  @EmptyAsAbsent() @IsOptional() @IsString() @MaxLength(255) content_disposition?: string;
  /** `<name@host>` (angle brackets) makes it an inline image referenced as `cid:name@host`. */
  @EmptyAsAbsent() @IsOptional() @IsString() @MaxLength(255) content_id?: string;
}

export class TrackingBody {
  @IsOptional() @IsBoolean() open?: boolean | null;
  @IsOptional() @IsBoolean() click?: boolean | null;
}

export class RetentionBody {
  @IsOptional()
  @IsInt()
  @Min(RETENTION_METADATA_DAYS.min)
  @Max(RETENTION_METADATA_DAYS.max)
  metadata?: number | null;

  @IsOptional()
  @IsInt()
  @Min(RETENTION_DATA_DAYS.min)
  @Max(RETENTION_DATA_DAYS.max)
  data?: number | null;
}

/** Bounds relative to "now" (spec 4.2 rule 6) are checked by the messages service. */
export class ScheduleBody {
  @EmptyAsAbsent() @IsOptional() @IsISO8601({ strict: true }) first_attempt?: string;
  @EmptyAsAbsent() @IsOptional() @IsISO8601({ strict: true }) expires?: string;
}

/** What every send shares: sender, content, attachments, headers and delivery options. */
export class SendOptionsBody {
  @IsDefined() @ValidateNested() @Type(() => AddressBody) from!: AddressBody;
  @NullAsAbsent() @IsOptional() @ValidateNested() @Type(() => AddressBody) reply_to?: AddressBody;
  @IsString() @MaxLength(SUBJECT_MAX_LENGTH) subject!: string;
  @EmptyAsAbsent() @IsOptional() @IsString() text_content?: string;
  @EmptyAsAbsent() @IsOptional() @IsString() html_content?: string;
  @EmptyAsAbsent() @IsOptional() @IsString() amp_content?: string;

  @NullAsAbsent()
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(ATTACHMENTS_MAX)
  @ValidateNested({ each: true })
  @Type(() => AttachmentBody)
  attachments?: AttachmentBody[];

  @NullAsAbsent() @IsOptional() @IsStringMap() headers?: Record<string, string>;

  @NullAsAbsent()
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(TAGS_MAX)
  @IsString({ each: true })
  @Length(1, TAG_MAX_LENGTH, { each: true })
  tags?: string[];

  @NullAsAbsent() @IsOptional() @IsBoolean() sandbox?: boolean;
  @EmptyAsAbsent() @IsOptional() @IsIn(SANDBOX_RESULTS) sandbox_result?: SandboxResult;
  @NullAsAbsent() @IsOptional() @ValidateNested() @Type(() => TrackingBody) tracking?: TrackingBody;
  @NullAsAbsent()
  @IsOptional()
  @ValidateNested()
  @Type(() => RetentionBody)
  retention?: RetentionBody;
  @NullAsAbsent() @IsOptional() @ValidateNested() @Type(() => ScheduleBody) schedule?: ScheduleBody;
}

/**
 * POST /messages (spec 2.1): one message per recipient. Its recipients are checked by hand first
 * (see checkedRecipients); the decorators check them, and word what is wrong, only when that fails.
 */
export class CreateMessageBody extends SendOptionsBody {
  @SkipWhenFastChecked()
  @IsArray()
  @ArrayMinSize(RECIPIENTS_MIN)
  @ArrayMaxSize(RECIPIENTS_MAX)
  @ValidateNested({ each: true })
  @Type(() => RecipientBody)
  recipients!: RecipientBody[];

  @NullAsAbsent() @IsOptional() @IsObject() substitutions?: Record<string, unknown>;
}

checkFastFirst(CreateMessageBody, 'recipients', (value) =>
  checkedRecipients(value, () => new RecipientBody()),
);

/** POST /messages/conversation: one message to to/cc/bcc together, no substitutions. */
export class CreateConversationBody extends SendOptionsBody {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(CONVERSATION_ADDRESSES_MAX)
  @ValidateNested({ each: true })
  @Type(() => AddressBody)
  to!: AddressBody[];

  @NullAsAbsent()
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(CONVERSATION_ADDRESSES_MAX)
  @ValidateNested({ each: true })
  @Type(() => AddressBody)
  cc?: AddressBody[];

  @NullAsAbsent()
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(CONVERSATION_ADDRESSES_MAX)
  @ValidateNested({ each: true })
  @Type(() => AddressBody)
  bcc?: AddressBody[];
}

/**
 * A request body too large for an RPC payload, put by the gateway into the JetStream object
 * store bucket `bucket` under `name`; the service reads it, checks size and digest, deletes it.
 */
export class UploadRef {
  @IsString() @Length(1, 64) bucket!: string;
  @IsString() @Length(1, 255) name!: string;
  @IsInt() @Min(0) size!: number;
  /** SHA-256 of the JSON bytes, hex. */
  @IsString() @Length(64, 64) sha256!: string;
}

/**
 * The `Idempotency-Key` the gateway claimed for a send: the service commits it with the send,
 * so a retry after a reply that never arrived answers the committed send instead of a copy.
 */
export class SendIdempotency {
  @IsString() @Length(1, IDEMPOTENCY_KEY_MAX_LENGTH) key!: string;
  /** SHA-256 (hex) of what the gateway matches a key on: method, path and the body's SHA-256. */
  @Matches(/^[0-9a-f]{64}$/) fingerprint!: string;
}

/** Who is sending: used for the events and the audit trail of a message. */
export class SendContext {
  @IsUUID() account_id!: string;
  /** The API key (or, later, SMTP credential) that sent it. */
  @IsOptional() @IsUUID() credential_id?: string;
  /** Which API received it: v1 has no templating, AMP, scheduling (spec 4.1). */
  @IsIn(['v1', 'v2']) api!: 'v1' | 'v2';

  @IsOptional()
  @ValidateNested()
  @Type(() => SendIdempotency)
  idempotency?: SendIdempotency;
}

/**
 * Exactly one of `body` (inline) and `upload` (large bodies) is set. A body is validated on its
 * own first (with its recipients' fast check): only an invalid one goes through the request's
 * decorators, which name what is wrong under `body.`.
 */
export class CreateMessageRequest extends SendContext {
  @SkipWhenFastChecked()
  @IsOptional()
  @ValidateNested()
  @Type(() => CreateMessageBody)
  body?: CreateMessageBody;

  @IsOptional() @ValidateNested() @Type(() => UploadRef) upload?: UploadRef;
}

checkFastFirst(CreateMessageRequest, 'body', (value) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const body = validatePayload(CreateMessageBody, value);
  return body.ok ? body.value : undefined;
});

export class CreateConversationRequest extends SendContext {
  @IsOptional()
  @ValidateNested()
  @Type(() => CreateConversationBody)
  body?: CreateConversationBody;

  @IsOptional() @ValidateNested() @Type(() => UploadRef) upload?: UploadRef;
}

/**
 * The sender domains a domain-scoped key may see or act on; absent when the key holds the
 * action's `:all` scope. The service answers "not found" for messages outside them.
 */
export class DomainRestriction {
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  domains?: string[];
}

/** getMessages filters of the reference contract (already parsed by the gateway). */
export class MessageFilters {
  @IsOptional() @IsArray() @IsString({ each: true }) status?: string[];
  @IsOptional() @IsString() @MaxLength(EMAIL_MAX_LENGTH) sender?: string;
  @IsOptional() @IsString() @MaxLength(EMAIL_MAX_LENGTH) recipient?: string;
  @IsOptional() @IsString() @MaxLength(SUBJECT_MAX_LENGTH) subject?: string;
  @IsOptional() @IsString() @MaxLength(EMAIL_MAX_LENGTH) message_id_header?: string;
  @IsOptional() @IsArray() @ArrayMaxSize(TAGS_MAX) @IsString({ each: true }) tags?: string[];
  @IsOptional() @IsISO8601({ strict: true }) from_time?: string;
  @IsOptional() @IsISO8601({ strict: true }) to_time?: string;
}

export class ListMessagesRequest extends DomainRestriction {
  @IsUUID() account_id!: string;
  @IsDefined() @ValidateNested() @Type(() => PageRequest) page!: PageRequest;
  @IsDefined() @ValidateNested() @Type(() => MessageFilters) filters!: MessageFilters;
}

/** A message by its generated id `<uuid@domain>` or the bare uuid. */
export class MessageRef extends DomainRestriction {
  @IsUUID() account_id!: string;
  @IsString() @Length(1, 320) message_id!: string;
}
