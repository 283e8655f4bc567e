import {
  type BounceMailData,
  type FeedbackMailData,
  type InboundSpoolRef,
} from '@envoi/contracts-routes';
import { eventDataDecoder } from '@envoi/shared-nats';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsHexadecimal,
  IsInt,
  IsString,
  IsUUID,
  Length,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

class SpoolRefPayload implements InboundSpoolRef {
  @IsString() @MaxLength(64) bucket!: string;
  @IsString() @MaxLength(255) name!: string;
  @IsInt() @Min(0) size!: number;
  @IsHexadecimal() @Length(64, 64) sha256!: string;
}

class EnvelopePayload {
  @IsUUID() inbound_id!: string;
  @IsString() received_at!: string;
  @IsString() @MaxLength(64) remote_address!: string;
  @IsString() @MaxLength(255) helo!: string;
  @IsBoolean() tls!: boolean;
  @IsString() @MaxLength(320) envelope_from!: string;
  @IsInt() @Min(0) size!: number;
  @ValidateNested() @Type(() => SpoolRefPayload) spool!: SpoolRefPayload;
}

class BounceRecipientPayload {
  @IsString() @MaxLength(320) address!: string;
  @IsUUID() message_uuid!: string;
}

class BounceMailPayload extends EnvelopePayload implements BounceMailData {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => BounceRecipientPayload)
  recipients!: BounceRecipientPayload[];
}

class FeedbackMailPayload extends EnvelopePayload implements FeedbackMailData {
  @IsString() @MaxLength(320) recipient!: string;
}

export const decodeBounceMail: (event: unknown) => BounceMailData = eventDataDecoder(
  'inbound.bounce',
  BounceMailPayload,
);

export const decodeFeedbackMail: (event: unknown) => FeedbackMailData = eventDataDecoder(
  'inbound.feedback',
  FeedbackMailPayload,
);
