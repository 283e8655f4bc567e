import { EventConsumerServiceEnv, IntSetting } from '@envoi/shared-config';

export { MigrationEnv as MigrationConfig } from '@envoi/shared-config';

export const SERVICE_NAME = 'accounts';

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
}
