import {
  OutboundAllowCidrs,
  OutboundAllowHttp,
  OutboxEventConsumerServiceEnv,
} from '@envoi/shared-config';
import { IsString, Matches } from 'class-validator';

export { MigrationEnv as MigrationConfig } from '@envoi/shared-config';

export const SERVICE_NAME = 'webhooks';

/**
 * The webhooks service's environment, validated once at boot: the database, the bus, health,
 * the outbox relay (OUTBOX_*) and the EVENTS consumers (EVENTS_*), and its own settings.
 */
export class WebhooksConfig extends OutboxEventConsumerServiceEnv {
  /** AES-256-GCM key (64 hex characters) that encrypts the webhooks' signing secrets at rest. */
  @IsString()
  @Matches(/^[0-9a-fA-F]{64}$/, {
    message: 'WEBHOOK_SECRET_ENCRYPTION_KEY must be 64 hexadecimal characters',
  })
  WEBHOOK_SECRET_ENCRYPTION_KEY!: string;

  /** Endpoints may use plain http:// (the local platform sets it; production denies it). */
  @OutboundAllowHttp() OUTBOUND_ALLOW_HTTP: boolean = false;

  /** CIDRs endpoints may reach although private or loopback; empty in production. */
  @OutboundAllowCidrs() OUTBOUND_ALLOW_CIDRS: string = '';
}
