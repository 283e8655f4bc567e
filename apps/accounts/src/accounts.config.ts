import { EventConsumerServiceEnv, IntSetting } from '@envoi/shared-config';
import { IsOptional, IsString, Matches } from 'class-validator';

export { MigrationEnv as MigrationConfig } from '@envoi/shared-config';

export const SERVICE_NAME = 'accounts';

const DAY_MS = 86_400_000;

/**
 * The accounts service's environment, validated once at boot. Its durable events are the domain
 * deletions (EVENTS_*).
 */
export class AccountsConfig extends EventConsumerServiceEnv {
  /**
   * How long a key creation or update waits for the domains service to resolve the domains its
   * scopes name; well under the gateway's RPC timeout, so that a slow answer fails cleanly (503)
   * rather than committing after the gateway gave up.
   */
  @IntSetting(100, 60_000) DOMAINS_RPC_TIMEOUT_MS: number = 5_000;

  /** The currency of the usage report's allocated costs (lowercase ISO 4217 code). */
  @IsOptional()
  @Matches(/^[a-z]{3}$/, { message: 'BILLING_CURRENCY must be a lowercase ISO 4217 code (usd)' })
  BILLING_CURRENCY: string = 'usd';

  /**
   * A parent's pooled invoice amount for a billing period, in BILLING_CURRENCY (`20` or
   * `20.50`): the usage report allocates it over the parent and its sub-accounts by volume.
   */
  @IsOptional()
  @Matches(/^[0-9]{1,12}(\.[0-9]{1,2})?$/, {
    message: 'BILLING_POOLED_INVOICE_AMOUNT must be an amount with at most two decimals (20.50)',
  })
  BILLING_POOLED_INVOICE_AMOUNT: string = '0';

  /**
   * How long after a billing period ends the ids of its counted receptions are kept (so that a
   * redelivered reception is not counted twice): longer than the EVENTS stream keeps events.
   */
  @IntSetting(60_000, 90 * DAY_MS) USAGE_DEDUPE_RETENTION_MS: number = 8 * DAY_MS;

  /** How often a replica purges those ids, and how many rows per statement. */
  @IntSetting(50, DAY_MS) USAGE_PURGE_INTERVAL_MS: number = 3_600_000;
  @IntSetting(1, 100_000) USAGE_PURGE_BATCH: number = 10_000;

  /**
   * AES-256-GCM key sealing SMTP credential passwords at rest (the dashboard shows them again):
   * 64 hex characters. Losing it loses every stored password (they still verify: AUTH checks a
   * scrypt hash).
   */
  @IsString()
  @Matches(/^[0-9a-fA-F]{64}$/, {
    message: 'SMTP_PASSWORD_ENCRYPTION_KEY must be 64 hexadecimal characters',
  })
  SMTP_PASSWORD_ENCRYPTION_KEY!: string;

  /**
   * Failed SMTP logins (reliability plan item 33): SMTP_LOGIN_FAILURES_MAX failures from one
   * address, or for one username, within SMTP_LOGIN_FAILURE_WINDOW_MS refuse its logins unchecked
   * for SMTP_LOGIN_BLOCK_MS. Counted in PostgreSQL, so every replica agrees.
   */
  @IntSetting(1, 1_000_000) SMTP_LOGIN_FAILURES_MAX: number = 10;
  @IntSetting(1_000, DAY_MS) SMTP_LOGIN_FAILURE_WINDOW_MS: number = 900_000;
  @IntSetting(1_000, DAY_MS) SMTP_LOGIN_BLOCK_MS: number = 900_000;
  /** How often a replica forgets counts whose window and block have both run out. */
  @IntSetting(50, DAY_MS) SMTP_LOGIN_FAILURES_PURGE_INTERVAL_MS: number = 600_000;
}
