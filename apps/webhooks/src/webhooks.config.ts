import { OutboxEventConsumerServiceEnv } from '@envoi/shared-config';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, IsString, Matches } from 'class-validator';

export { MigrationEnv as MigrationConfig } from '@envoi/shared-config';

export const SERVICE_NAME = 'webhooks';

/**
 * `true` or `false` (the environment's text, not the implicit conversion, which reads any text as
 * true), as a boolean; anything else stays text, which fails validation.
 */
function readBooleanSetting({ obj, key }: { obj: Record<string, unknown>; key: string }): unknown {
  const raw = obj[key];
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  return raw;
}

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

  /** Whether webhook URLs may be plain `http://` (development only). */
  @IsOptional()
  @Transform(readBooleanSetting)
  @IsBoolean({ message: 'OUTBOUND_ALLOW_HTTP must be true or false' })
  OUTBOUND_ALLOW_HTTP: boolean = false;
}
