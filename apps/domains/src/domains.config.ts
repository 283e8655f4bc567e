import { isHostname } from '@envoi/contracts-core';
import { ServiceEnv } from '@envoi/shared-config';
import { Transform, Type } from 'class-transformer';
import {
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateBy,
  type ValidationOptions,
} from 'class-validator';

export const SERVICE_NAME = 'domains';

/** A hostname of Envoi's own endpoints (lowercase, no trailing dot). */
function IsEndpointHostname(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isEndpointHostname',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isHostname(value),
        defaultMessage: (args) =>
          `${args?.property ?? 'value'} must be a hostname such as mx.example.com`,
      },
    },
    options,
  );
}

const normalizeHostname = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? value.trim().toLowerCase().replace(/\.$/, '') : value;

/** `host:port` or `[ipv6]:port`, or a bare address (port 53), comma-separated. */
const DNS_SERVER = String.raw`(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:.]+|[A-Za-z0-9.-]+)(:[0-9]{1,5})?`;

/** The domains service's environment, validated once at boot. */
export class DomainsConfig extends ServiceEnv {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) DATABASE_POOL_SIZE: number = 10;

  /** See the accounts service: leave the queue group, then let in-flight handlers finish. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(60_000) SHUTDOWN_GRACE_MS: number = 3_000;

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
  @IsOptional()
  @Matches(new RegExp(`^${DNS_SERVER}(,${DNS_SERVER})*$`), {
    message: 'DNS_SERVERS must be host:port entries separated by commas',
  })
  DNS_SERVERS?: string;

  /** Per-query timeout of the resolver, and attempts per server. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(50) @Max(30_000) DNS_TIMEOUT_MS: number = 3_000;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(5) DNS_TRIES: number = 2;

  /**
   * A check gives up on lookups still running after this long (they count as unanswered), so that
   * a check-dns answers before the caller's request times out (10 s at the gateway).
   */
  @IsOptional() @Type(() => Number) @IsInt() @Min(100) @Max(120_000) DNS_CHECK_DEADLINE_MS: number =
    8_000;

  /** A check-dns within this long of the last check answers that check's result. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(3_600_000) DNS_CHECK_CACHE_MS: number =
    60_000;

  /** Every domain is re-checked this often (plus up to 10 % jitter). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1_000) DNS_RECHECK_INTERVAL_MS: number = 900_000;

  /** How often a replica looks for domains due for their re-check. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(50) @Max(600_000) DNS_RECHECK_POLL_MS: number =
    10_000;

  /** Domains a replica claims at once, and checks in parallel. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) DNS_RECHECK_BATCH: number = 20;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(50) DNS_RECHECK_CONCURRENCY: number = 5;

  /** How long other services may cache a sender authorization (changes are also broadcast). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(3_600_000) SENDER_CACHE_TTL_MS: number =
    60_000;

  /** Outbox relay: pause between idle runs, and events per transaction. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(60_000)
  OUTBOX_RELAY_INTERVAL_MS: number = 1_000;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1_000) OUTBOX_RELAY_BATCH: number = 100;

  dnsServers(): string[] | null {
    return this.DNS_SERVERS ? this.DNS_SERVERS.split(',') : null;
  }
}

/** What a migration run needs: the database and nothing else (no bus). */
export class MigrationConfig {
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL!: string;
}
