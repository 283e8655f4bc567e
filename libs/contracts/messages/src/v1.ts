import {
  checkFastFirst,
  EmptyAsAbsent,
  NullAsAbsent,
  SkipWhenFastChecked,
} from '@envoi/contracts-core';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsEmail,
  IsOptional,
  IsString,
  Length,
  MaxLength,
  ValidateNested,
} from 'class-validator';

import {
  ATTACHMENTS_MAX,
  DISPLAY_NAME_MAX_LENGTH,
  EMAIL_MAX_LENGTH,
  RECIPIENTS_MAX,
  SUBJECT_MAX_LENGTH,
} from './limits';
import { checkedAddresses } from './recipients-fast-check';
import { AddressBody, IsStringMap } from './requests';

/** v1 attachment (spec 4.1): like v2's, without content_disposition. */
export class V1AttachmentBody {
  @IsString() data!: string;
  @IsString() @Length(1, 255) content_type!: string;
  @IsString() @Length(1, 255) file_name!: string;
  @NullAsAbsent() @IsOptional() @IsBoolean() base64?: boolean;
  @EmptyAsAbsent() @IsOptional() @IsString() @MaxLength(255) content_id?: string;
}

export class V1ReplyToBody {
  @IsEmail() @MaxLength(EMAIL_MAX_LENGTH) email!: string;
  @EmptyAsAbsent() @IsOptional() @IsString() @MaxLength(DISPLAY_NAME_MAX_LENGTH) name?: string;
}

export class V1ContentBody {
  @IsString() @MaxLength(SUBJECT_MAX_LENGTH) subject!: string;
  @EmptyAsAbsent() @IsOptional() @IsString() text_body?: string;
  @EmptyAsAbsent() @IsOptional() @IsString() html_body?: string;

  @NullAsAbsent()
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(ATTACHMENTS_MAX)
  @ValidateNested({ each: true })
  @Type(() => V1AttachmentBody)
  attachments?: V1AttachmentBody[];

  @NullAsAbsent() @IsOptional() @IsStringMap() headers?: Record<string, string>;
  @NullAsAbsent()
  @IsOptional()
  @ValidateNested()
  @Type(() => V1ReplyToBody)
  reply_to?: V1ReplyToBody;
}

/** POST /v1/email/send (spec 4.1): content nested under `content`, up to 100 recipients. */
/** Its recipients are checked by hand first, as v2's (see checkedAddresses). */
export class V1SendBody {
  @IsDefined() @ValidateNested() @Type(() => AddressBody) from!: AddressBody;

  @SkipWhenFastChecked()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(RECIPIENTS_MAX)
  @ValidateNested({ each: true })
  @Type(() => AddressBody)
  recipients!: AddressBody[];

  @IsDefined() @ValidateNested() @Type(() => V1ContentBody) content!: V1ContentBody;
}

checkFastFirst(V1SendBody, 'recipients', (value) =>
  checkedAddresses(value, () => new AddressBody()),
);

/** The 200 answer of v1 send: the caller must read the counts (spec 4.1). */
export interface V1SendResult {
  success_count: number;
  fail_count: number;
  failed_recipients: string[];
  /** `address: reason` per failed recipient. */
  errors: string[];
}
