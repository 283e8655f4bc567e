import { hostname } from 'node:os';

import { isHostname } from '@envoi/contracts-core';
import { IntSetting } from '@envoi/shared-config';
import {
  IsDnsServerList,
  IsHostnameSetting,
  normalizeHostname,
  OutboxServiceEnv,
} from '@envoi/shared-config';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, IsUrl, Matches, MinLength } from 'class-validator';

export { MigrationEnv as MigrationConfig } from '@envoi/shared-config';

export const SERVICE_NAME = 'delivery';

const DAY_MS = 86_400_000;

export const SMTP_TLS_POLICIES = ['opportunistic', 'required', 'disabled'] as const;
export type SmtpTlsPolicy = (typeof SMTP_TLS_POLICIES)[number];

/** A hostname (lowercase, no trailing dot) of two labels or more. */
const IsHostnameValue = (): PropertyDecorator => IsHostnameSetting('mail.example.com');

/** This machine's name when it is a usable EHLO name, else a placeholder the operator replaces. */
function defaultHeloName(): string {
  const name = hostname().toLowerCase();
  return isHostname(name) ? name : 'localhost.localdomain';
}

/**
 * The delivery service's environment, validated once at boot. Its outbox relay publishes delivery
 * events and retry jobs.
 */
export class DeliveryConfig extends OutboxServiceEnv {
  /**
   * On SIGTERM: stop taking jobs, give the SMTP sessions in flight this long to finish, then abort
   * the rest and hand their jobs back to the queue. Longer than the other services' on purpose
   * (10 s by default, up to 10 min): an SMTP session outlasts an RPC handler.
   */
  @IntSetting(0, 600_000) override SHUTDOWN_GRACE_MS: number = 10_000;

  /**
   * Jobs one replica works on at once, and messages it delivers at once across them (SMTP
   * sessions and waits for a pooled connection): a job may carry a chunk of a send. More does not
   * deliver faster to one destination: its messages then wait for one of its
   * SMTP_MAX_CONNECTIONS_PER_HOST pooled connections instead (bench:delivery, 2 cores: 100 gave
   * 343 live / 254 backlog msg/s against 319 / 231 with 20, within the run-to-run noise).
   */
  @IntSetting(1, 1_000) DELIVERY_CONCURRENCY: number = 20;

  /**
   * Messages a replica pulls ahead of its DELIVERY_CONCURRENCY slots: it takes another job only
   * while the messages it holds and has not finished are fewer than both together, so a burst
   * stays in the stream for the other replicas instead of queueing here (a job may still bring up
   * to one chunk of a send above that). More does not carry one-message jobs faster: with 200
   * (bench:delivery's half-rate case, 2 loaded cores) a replica held 167 of them 2.1 s each
   * instead of leaving them in the stream, as SMTP_MAX_CONNECTIONS_PER_HOST connections to the
   * one destination, each held ~50-90 ms per message, were what limited it either way.
   */
  @IntSetting(0, 10_000) DELIVERY_READ_AHEAD: number = 20;

  /**
   * A job not acknowledged this long after it was handed out is handed out again; a worker sends
   * "in progress" every third of it while it works on one.
   */
  @IntSetting(1_000, 600_000) DELIVERY_ACK_WAIT_MS: number = 30_000;

  /**
   * An attempt is claimed (in the database) once its SMTP session has a connection, for this
   * long; its worker renews every claim it holds every third of it, in one statement. A worker
   * that dies stops renewing: another takes its attempts over once their claims end.
   */
  @IntSetting(1_000, 600_000) DELIVERY_CLAIM_TTL_MS: number = 30_000;

  /**
   * Retry delays after the 1st, 2nd, … transient failure (milliseconds, comma-separated, each
   * jittered and multiplied by TIME_SCALE): a message is attempted at most once more than the
   * number of entries.
   */
  @IsOptional()
  @Matches(/^[0-9]{1,10}(,[0-9]{1,10}){0,49}$/, {
    message: 'RETRY_SCHEDULE_MS must be comma-separated millisecond counts (at most 50)',
  })
  RETRY_SCHEDULE_MS: string = '60000,300000,900000,1800000,3600000,7200000,14400000';

  /** Each retry delay varies by up to this fraction, either way. */
  @IsOptional()
  @Matches(/^(0(\.[0-9]+)?|1(\.0+)?)$/, { message: 'RETRY_JITTER_RATIO must be between 0 and 1' })
  RETRY_JITTER_RATIO: string = '0.1';

  /**
   * A message still undelivered this long after its first attempt fails (also multiplied by
   * TIME_SCALE); `schedule.expires` can end it sooner.
   */
  @IntSetting(1_000, 30 * DAY_MS) MAX_MESSAGE_AGE_MS: number = DAY_MS;

  /** Resolvers of the recipients' MX lookups (`host:port`, comma-separated); the system's when unset. */
  @IsOptional() @IsDnsServerList() DNS_SERVERS?: string;

  /** Per-query timeout of the resolver, and attempts per server. */
  @IntSetting(50, 30_000) DNS_TIMEOUT_MS: number = 3_000;
  @IntSetting(1, 5) DNS_TRIES: number = 2;

  /**
   * Longest a recipient domain's route (MX hosts and their addresses) is reused; less when the
   * A/AAAA records' TTL says so (never under 1 s). Node's resolver does not report MX TTLs, so this
   * also stands in for them. 0: every message looks its route up.
   */
  @IntSetting(0, DAY_MS) MX_CACHE_MAX_TTL_MS: number = 300_000;

  /**
   * How long a domain that does not exist, publishes a null MX or has no address at all is
   * bounced without asking again (at most MX_CACHE_MAX_TTL_MS). Lookup failures are never kept.
   */
  @IntSetting(0, 3_600_000) MX_NEGATIVE_CACHE_MS: number = 60_000;

  /** Recipient domains whose route is kept at most; the oldest are dropped first. */
  @IntSetting(0, 1_000_000) MX_CACHE_MAX_ENTRIES: number = 10_000;

  /** The port of recipients' mail servers: 25, or a test sink's. */
  @IntSetting(1, 65_535) SMTP_OUTBOUND_PORT: number = 25;

  /** The name this host gives in EHLO (should match its reverse DNS). */
  @IsOptional() @Transform(normalizeHostname) @IsHostnameValue() SMTP_HELO_NAME: string =
    defaultHeloName();

  /**
   * opportunistic: STARTTLS whenever offered, any certificate, plain text when it is not offered
   * or the handshake fails; required: a server without a working STARTTLS is a transient failure;
   * disabled: never STARTTLS.
   */
  @IsOptional() @IsIn(SMTP_TLS_POLICIES) SMTP_TLS_POLICY: SmtpTlsPolicy = 'opportunistic';

  /** Pooled connections per destination address, messages per connection, idle close. */
  @IntSetting(1, 100) SMTP_MAX_CONNECTIONS_PER_HOST: number = 5;
  @IntSetting(1, 100_000) SMTP_MAX_MESSAGES_PER_CONNECTION: number = 100;
  @IntSetting(100, 600_000) SMTP_POOL_IDLE_MS: number = 60_000;

  /** Connecting (TCP, greeting, EHLO, STARTTLS), and a silence of the server mid-session. */
  @IntSetting(100, 600_000) SMTP_CONNECT_TIMEOUT_MS: number = 60_000;
  @IntSetting(100, 1_200_000) SMTP_SOCKET_TIMEOUT_MS: number = 300_000;

  /**
   * The longest one attempt may take, waiting for a pooled connection and every MX tried
   * included; then it is abandoned as a transient failure.
   */
  @IntSetting(1_000, 3_600_000) SMTP_ATTEMPT_TIMEOUT_MS: number = 900_000;

  /** Addresses (over every MX host) one attempt tries before it defers. */
  @IntSetting(1, 20) SMTP_MAX_ADDRESSES: number = 5;

  /**
   * The messages service's TRACKING_BASE_URL and TRACKING_SECRET, the same values: the worker
   * composes each message (its tracked links and open pixel) just before signing it.
   */
  @IsUrl({ protocols: ['https', 'http'], require_tld: false, require_protocol: true })
  TRACKING_BASE_URL!: string;

  @IsString() @MinLength(32) TRACKING_SECRET!: string;

  /** Where bounces go while a domain's own return-path host is not verified (the platform's). */
  @IsOptional() @Transform(normalizeHostname) @IsHostnameValue() RETURN_PATH_TARGET: string =
    'bounces.envoi.test';

  /** Longest a sender domain's DKIM key is reused (the domains service's answer may say less). */
  @IntSetting(0, 3_600_000) SENDER_CACHE_MAX_TTL_MS: number = 60_000;

  /**
   * A job of an account that is not active (suspended, deleted) is handed back for this long,
   * then its account's status is looked at again: its mail goes out at most this long after the
   * account is active again.
   */
  @IntSetting(100, 3_600_000) DELIVERY_SUSPENDED_RECHECK_MS: number = 60_000;

  /**
   * Longest an account's status is reused; a change the accounts service announces drops it at
   * once. 0: every job asks.
   */
  @IntSetting(0, 600_000) ACCOUNT_STATUS_CACHE_TTL_MS: number = 10_000;

  /** How long a call to the messages or domains service may take. */
  @IntSetting(100, 120_000) RPC_TIMEOUT_MS: number = 10_000;

  /**
   * Asynchronous bounces and complaints that matched no message are kept for inspection: their
   * first this many bytes (a DSN and the returned headers fit), for this long.
   */
  @IntSetting(0, 1_048_576) INBOUND_UNMATCHED_MAX_BYTES: number = 65_536;
  @IntSetting(60_000, 365 * DAY_MS) INBOUND_UNMATCHED_RETENTION_MS: number = 30 * DAY_MS;

  /**
   * How long the record of an applied bounce or complaint is kept: longer than the EVENTS stream
   * keeps the MX's events (7 days), so that no redelivery applies one twice.
   */
  @IntSetting(60_000, 90 * DAY_MS) INBOUND_REPORTS_RETENTION_MS: number = 8 * DAY_MS;

  /** How often both are purged (each run deletes at most a few batches). */
  @IntSetting(1_000, DAY_MS) INBOUND_PURGE_INTERVAL_MS: number = 3_600_000;

  dnsServers(): string[] | null {
    return this.DNS_SERVERS ? this.DNS_SERVERS.split(',') : null;
  }

  /** The retry delays, scaled by TIME_SCALE. */
  retryScheduleMs(): number[] {
    return this.RETRY_SCHEDULE_MS.split(',').map((entry) => this.scaled(Number(entry)));
  }

  maxMessageAgeMs(): number {
    return this.scaled(this.MAX_MESSAGE_AGE_MS);
  }

  retryJitterRatio(): number {
    return Number(this.RETRY_JITTER_RATIO);
  }
}
