import { ServiceEnv } from '@envoi/shared-config';
import { RATE_LIMIT_MODES, type RateLimitMode } from '@envoi/shared-edge';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';

export const SERVICE_NAME = 'gateway';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * The gateway's environment, validated once at boot. Its database pool (DATABASE_POOL_SIZE) holds
 * idempotency records.
 */
export class GatewayConfig extends ServiceEnv {
  @IsOptional() @IsInt() @Min(0) @Max(65535) HTTPS_PORT: number = 8443;
  @IsOptional() @IsString() HTTPS_HOST: string = '127.0.0.1';
  @IsString() TLS_CERT_FILE!: string;
  @IsString() TLS_KEY_FILE!: string;

  /**
   * Proxies whose X-Forwarded-For is believed, as comma-separated CIDRs or addresses. Empty: the
   * client IP is always the socket's peer address.
   */
  @IsOptional() @IsString() TRUSTED_PROXIES: string = '';

  /** Signs pagination cursors; every replica must share it. */
  @IsString() @MinLength(32) CURSOR_SECRET!: string;

  /** How long a verified key is trusted before asking the accounts service again. */
  @IsOptional() @IsInt() @Min(0) API_KEY_CACHE_TTL_MS: number = 5_000;
  /** How often batched last-use times are reported to the accounts service. */
  @IsOptional() @IsInt() @Min(100) API_KEY_USAGE_FLUSH_MS: number = 30_000;
  @IsOptional() @IsInt() @Min(100) RPC_TIMEOUT_MS: number = 10_000;

  /** How long a client has to finish the TLS handshake (and to send its first byte at all). */
  @IsOptional() @IsInt() @Min(100) TLS_HANDSHAKE_TIMEOUT_MS: number = 10_000;
  /** How long a client has to send a request's headers, from its first byte. */
  @IsOptional() @IsInt() @Min(100) HTTP_HEADERS_TIMEOUT_MS: number = 10_000;
  /** How long a client has to send a whole request, body included (a 40 MB upload on a slow link). */
  @IsOptional() @IsInt() @Min(100) HTTP_REQUEST_TIMEOUT_MS: number = 120_000;
  /** A connection on which nothing moves for this long is closed, in a request or between two. */
  @IsOptional() @IsInt() @Min(100) HTTP_IDLE_TIMEOUT_MS: number = 30_000;
  /**
   * After answering a request whose body it has not read (413, 401 before the body), how long the
   * gateway keeps reading and discarding that body so the client can read the answer.
   */
  @IsOptional() @IsInt() @Min(0) HTTP_UNREAD_BODY_DRAIN_MS: number = 5_000;
  /** Open connections one client IP may hold; more are closed at once. */
  @IsOptional() @IsInt() @Min(1) HTTP_MAX_CONNECTIONS_PER_IP: number = 256;
  /** Open connections in all; more are closed at once. */
  @IsOptional() @IsInt() @Min(1) HTTP_MAX_CONNECTIONS: number = 10_000;

  /** Largest accepted request body (a message with attachments can be tens of MB). */
  @IsOptional() @IsInt() @Min(1024) BODY_LIMIT_BYTES: number = 40 * 1024 * 1024;

  /** AES-256-GCM key (64 hex characters) for stored responses that carry a secret. */
  @Matches(/^[0-9a-fA-F]{64}$/, {
    message: 'IDEMPOTENCY_ENCRYPTION_KEY must be 64 hexadecimal characters (32 bytes)',
  })
  IDEMPOTENCY_ENCRYPTION_KEY!: string;
  /** How long an ordinary stored outcome is replayed (spec 8: 24 hours). */
  @IsOptional() @IsInt() @Min(1) IDEMPOTENCY_TTL_MS: number = 24 * HOUR_MS;
  /** How long a secret-bearing 201 is replayed (spec 8: 5 minutes). */
  @IsOptional() @IsInt() @Min(1) IDEMPOTENCY_SECRET_TTL_MS: number = 5 * MINUTE_MS;
  /** The in-flight lease; a crashed execution frees its key after this (spec 8: at most 5 min). */
  @IsOptional() @IsInt() @Min(1) @Max(5 * MINUTE_MS) IDEMPOTENCY_LEASE_MS: number = 5 * MINUTE_MS;
  /** How often expired idempotency records are purged. */
  @IsOptional() @IsInt() @Min(100) IDEMPOTENCY_PURGE_INTERVAL_MS: number = MINUTE_MS;

  /**
   * `shared` (default) holds the limits with every replica, reconciled over NATS; `local` per
   * replica; `off` only behind another limiter.
   */
  @IsOptional() @IsIn(RATE_LIMIT_MODES) RATE_LIMIT_MODE: RateLimitMode = 'shared';
  /** Per-account general limit (spec 8: 100 requests per second, burst 200). */
  @IsOptional() @IsInt() @Min(1) RATE_LIMIT_GENERAL_PER_SECOND: number = 100;
  @IsOptional() @IsInt() @Min(1) RATE_LIMIT_GENERAL_BURST: number = 200;
  /** Per-account statistics limit (spec 8: 1 request per second, burst 1). */
  @IsOptional() @IsInt() @Min(1) RATE_LIMIT_STATISTICS_PER_SECOND: number = 1;
  @IsOptional() @IsInt() @Min(1) RATE_LIMIT_STATISTICS_BURST: number = 1;
  /**
   * Per client IP, in each replica, on the public tracking routes (`/t/…`): pixel and link floods
   * get 429 rather than reaching the messages service.
   */
  @IsOptional() @IsInt() @Min(1) RATE_LIMIT_TRACKING_PER_SECOND: number = 20;
  @IsOptional() @IsInt() @Min(1) RATE_LIMIT_TRACKING_BURST: number = 100;
  /**
   * How often each replica reports its accounts' traffic to the others (`shared`); the same on
   * every replica. Shorter tightens the limits across replicas, for more NATS messages.
   */
  @IsOptional() @IsInt() @Min(10) @Max(5_000) RATE_LIMIT_SYNC_INTERVAL_MS: number = 100;

  /** How often a webhook stream listener is pinged; one that misses a ping is closed. */
  @IsOptional() @IsInt() @Min(100) @Max(2 * MINUTE_MS) WEBHOOK_STREAM_PING_INTERVAL_MS: number =
    30_000;

  trustedProxies(): string[] {
    return this.TRUSTED_PROXIES.split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0);
  }
}
