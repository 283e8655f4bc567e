import {
  IntSetting,
  IsDnsServerList,
  IsHostnameSetting,
  normalizeHostname,
  OutboxServiceEnv,
} from '@envoi/shared-config';
import { Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Min } from 'class-validator';

export { MigrationEnv as MigrationConfig } from '@envoi/shared-config';

export const SERVICE_NAME = 'domains';

/** A hostname of Envoi's own endpoints (lowercase, no trailing dot). */
const IsEndpointHostname = (): PropertyDecorator => IsHostnameSetting('mx.example.com');

/** The domains service's environment, validated once at boot. */
export class DomainsConfig extends OutboxServiceEnv {
  /** AES-256-GCM key (64 hex characters) that encrypts DKIM private keys at rest. */
  @IsString()
  @Matches(/^[0-9a-fA-F]{64}$/, {
    message: 'DKIM_ENCRYPTION_KEY must be 64 hexadecimal characters',
  })
  DKIM_ENCRYPTION_KEY!: string;

  /** The selector of domains without an override (captured per domain when it is created). */
  @IsOptional()
  @Matches(/^(?!-)[a-z0-9-]{1,62}(?<!-)$/, {
    message: 'DKIM_DEFAULT_SELECTOR must be one DNS label',
  })
  DKIM_DEFAULT_SELECTOR: string = 'envoi';

  /** Envoi's SPF record, which a customer's SPF record must include. */
  @IsOptional() @Transform(normalizeHostname) @IsEndpointHostname() SPF_INCLUDE_DOMAIN: string =
    'spf.envoi.test';

  /** What the return-path CNAME points at: the host that receives bounces. */
  @IsOptional() @Transform(normalizeHostname) @IsEndpointHostname() RETURN_PATH_TARGET: string =
    'bounces.envoi.test';

  /** What the tracking (and subscription, media) CNAMEs point at. */
  @IsOptional() @Transform(normalizeHostname) @IsEndpointHostname() TRACKING_TARGET: string =
    'track.envoi.test';

  /** The inbound MX host, for routes. */
  @IsOptional() @Transform(normalizeHostname) @IsEndpointHostname() INBOUND_MX_HOST: string =
    'mx.envoi.test';

  /** Resolvers (`host:port`, comma-separated); the system's when unset. */
  @IsOptional() @IsDnsServerList() DNS_SERVERS?: string;

  /** Per-query timeout of the resolver, and attempts per server. */
  @IntSetting(50, 30_000) DNS_TIMEOUT_MS: number = 3_000;
  @IntSetting(1, 5) DNS_TRIES: number = 2;

  /**
   * A check gives up on lookups still running after this long (they count as unanswered), so that
   * a check-dns answers before the caller's request times out (10 s at the gateway).
   */
  @IntSetting(100, 120_000) DNS_CHECK_DEADLINE_MS: number = 8_000;

  /** A check-dns within this long of the last check answers that check's result. */
  @IntSetting(0, 3_600_000) DNS_CHECK_CACHE_MS: number = 60_000;

  /** Every domain is re-checked this often (plus up to 10 % jitter). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1_000) DNS_RECHECK_INTERVAL_MS: number = 900_000;

  /** How often a replica looks for domains due for their re-check. */
  @IntSetting(50, 600_000) DNS_RECHECK_POLL_MS: number = 10_000;

  /** Domains a replica claims at once, and checks in parallel. */
  @IntSetting(1, 500) DNS_RECHECK_BATCH: number = 20;
  @IntSetting(1, 50) DNS_RECHECK_CONCURRENCY: number = 5;

  /** How long other services may cache a sender authorization (changes are also broadcast). */
  @IntSetting(0, 3_600_000) SENDER_CACHE_TTL_MS: number = 60_000;

  dnsServers(): string[] | null {
    return this.DNS_SERVERS ? this.DNS_SERVERS.split(',') : null;
  }
}
