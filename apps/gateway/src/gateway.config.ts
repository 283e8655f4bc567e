import { BaseEnv } from '@envoi/shared-config';
import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';

export class GatewayConfig extends BaseEnv {
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

  /** Largest accepted request body (a message with attachments can be tens of MB). */
  @IsOptional() @IsInt() @Min(1024) BODY_LIMIT_BYTES: number = 40 * 1024 * 1024;

  trustedProxies(): string[] {
    return this.TRUSTED_PROXIES.split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0);
  }
}
