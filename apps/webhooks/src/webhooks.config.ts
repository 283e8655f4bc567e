import {
  OutboundAllowCidrs,
  OutboundAllowHttp,
  OutboxEventConsumerServiceEnv,
} from '@envoi/shared-config';

export { MigrationEnv as MigrationConfig } from '@envoi/shared-config';

export const SERVICE_NAME = 'webhooks';

/**
 * The webhooks service's environment, validated once at boot: the database, the bus, health,
 * the outbox relay (OUTBOX_*) and the EVENTS consumers (EVENTS_*). Add the service's own settings
 * here, each with its decorators and a default (README.md lists every setting).
 */
export class WebhooksConfig extends OutboxEventConsumerServiceEnv {
  /** Endpoints may use plain http:// (the local platform sets it; production denies it). */
  @OutboundAllowHttp() OUTBOUND_ALLOW_HTTP: boolean = false;

  /** CIDRs endpoints may reach although private or loopback; empty in production. */
  @OutboundAllowCidrs() OUTBOUND_ALLOW_CIDRS: string = '';
}
