import { IsString, Length } from 'class-validator';

export const PING_NAME_MAX = 100;

/** Payload of `webhooks.service.ping.v1`. */
export class PingRequest {
  @IsString()
  @Length(1, PING_NAME_MAX)
  name!: string;
}

export interface PingReply {
  service: string;
  message: string;
}
