import { BaseEnv, IntSetting, IsHostnameSetting, normalizeHostname } from '@envoi/shared-config';
import { Transform } from 'class-transformer';
import { IsEmail, IsOptional, IsString, Matches } from 'class-validator';

export const SERVICE_NAME = 'smtp';

const MB = 1024 * 1024;
const DAY_MS = 86_400_000;

/**
 * The smtp edge's environment, validated once at boot. It owns no data: its only state is a
 * short cache of verified logins and sender authorizations per replica.
 */
export class SmtpConfig extends BaseEnv {
  /** Plain ports that offer STARTTLS, comma-separated (25 only when listed). */
  @IsOptional()
  @Matches(/^\d{1,5}(,\d{1,5})*$/, {
    message: 'SMTP_SUBMISSION_PORTS must be ports, comma-separated',
  })
  SMTP_SUBMISSION_PORTS: string = '587,2525';
  /** A port speaking TLS from the first byte (465); 0 or unset: none. */
  @IntSetting(0, 65535) SMTP_IMPLICIT_TLS_PORT: number = 0;
  @IsOptional() @IsString() SMTP_HOST: string = '0.0.0.0';
  @IsString() SMTP_TLS_CERT_FILE!: string;
  @IsString() SMTP_TLS_KEY_FILE!: string;
  /** The name in the banner and the EHLO reply. */
  @IsOptional() @IsString() SMTP_HOSTNAME: string = 'localhost';

  /** Largest message, advertised with SIZE; more is refused with 552 5.3.4. */
  @IntSetting(1024, 100 * MB) SMTP_MAX_MESSAGE_BYTES: number = 20 * MB;
  @IntSetting(1, 1000) SMTP_MAX_RECIPIENTS: number = 50;
  /** MAIL FROM commands one connection may issue; later ones get a temporary failure. */
  @IntSetting(1, 1_000_000) SMTP_MAX_TRANSACTIONS_PER_CONNECTION: number = 10_000;
  /** A connection silent this long gets 421 4.4.2 and is closed. */
  @IntSetting(100, 3_600_000) SMTP_IDLE_TIMEOUT_MS: number = 60_000;
  @IntSetting(1, 100_000) SMTP_MAX_CONNECTIONS_PER_IP: number = 20;
  @IntSetting(1, 1_000_000) SMTP_MAX_CONNECTIONS: number = 10_000;

  /** How long a verified login is reused; changes are also broadcast and drop it at once. */
  @IntSetting(0, 600_000) SMTP_LOGIN_CACHE_TTL_MS: number = 10_000;
  /** How long a sender domain's authorization is reused; changes are also broadcast. */
  @IntSetting(0, 600_000) SMTP_SENDER_CACHE_TTL_MS: number = 10_000;
  /** The first delay after a failed AUTH on a connection; each further failure doubles it. */
  @IntSetting(0, 60_000) SMTP_AUTH_FAILURE_DELAY_MS: number = 1_000;
  /** How long one attempt of a bus request waits for its reply. */
  @IntSetting(100, 120_000) RPC_TIMEOUT_MS: number = 10_000;
  /** Attempts of the accept request (same submission id) before the client gets 451. */
  @IntSetting(1, 10) SMTP_SUBMIT_ATTEMPTS: number = 3;

  /** On SIGTERM: how long sessions in flight may go on before they are closed. */
  @IntSetting(0, 600_000) SHUTDOWN_GRACE_MS: number = 30_000;

  /** The MX (inbound mail: routes, bounces, complaints); 0: no MX on this replica. */
  @IntSetting(0, 65535) SMTP_MX_PORT: number = 25;
  /** The platform's bounce (VERP) host; unset: RETURN_PATH_TARGET, as the delivery service. */
  @IsOptional()
  @Transform(normalizeHostname)
  @IsHostnameSetting('bounces.example.com')
  SMTP_MX_BOUNCE_DOMAIN?: string;
  @IsOptional()
  @Transform(normalizeHostname)
  @IsHostnameSetting('bounces.example.com')
  RETURN_PATH_TARGET: string = 'bounces.envoi.test';
  /** Where ARF complaints arrive; unset: `fbl@<bounce domain>`. */
  @IsOptional() @IsEmail({ require_tld: false }) SMTP_MX_FEEDBACK_ADDRESS?: string;
  /** Largest inbound message, advertised with SIZE; more is refused with 552 5.3.4. */
  @IntSetting(1024, 100 * MB) SMTP_MX_MAX_MESSAGE_BYTES: number = 25 * MB;
  /**
   * How long the MX reuses a domain's route set at RCPT; the routes service's change broadcasts
   * drop it at once.
   */
  @IntSetting(0, 600_000) SMTP_MX_ROUTE_CACHE_TTL_MS: number = 30_000;
  /** How long a received message stays in the inbound spool for its consumers. */
  @IntSetting(60_000, 90 * DAY_MS) SMTP_MX_SPOOL_TTL_MS: number = 7 * DAY_MS;

  /** Port of the plain-HTTP `/healthz` and `/readyz` endpoints; 0 takes any free port (logged). */
  @IntSetting(0, 65535) HEALTH_PORT: number = 0;
  @IsOptional() @IsString() HEALTH_HOST: string = '127.0.0.1';

  submissionPorts(): number[] {
    return this.SMTP_SUBMISSION_PORTS.split(',').map(Number);
  }

  mxBounceDomain(): string {
    return this.SMTP_MX_BOUNCE_DOMAIN ?? this.RETURN_PATH_TARGET;
  }

  mxFeedbackAddress(): string {
    return (this.SMTP_MX_FEEDBACK_ADDRESS ?? `fbl@${this.mxBounceDomain()}`).toLowerCase();
  }
}
