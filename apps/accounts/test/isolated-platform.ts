import { IsolatedPlatform as SharedIsolatedPlatform } from '@envoi/shared-testing';

export type { ChildHandle } from '@envoi/shared-testing';
export { WORKSPACE_ROOT } from '@envoi/shared-testing';

/**
 * A private slice of the platform for the accounts tests: a database of their own (on the
 * PostgreSQL of the global setup) and a nats-server of their own. The real domains service runs
 * beside the accounts service here; on the shared bus it would join the `domains` queue group of
 * the domains tests running at the same time (with another DKIM key and resolver), and on the
 * shared database its DNS re-checks would claim their domains. ACCOUNTS_INT_KEEP_LOGS keeps its
 * directory and logs.
 */
export type IsolatedPlatform = SharedIsolatedPlatform;
export const IsolatedPlatform = {
  start: (): Promise<IsolatedPlatform> => SharedIsolatedPlatform.start({ owner: 'accounts' }),
  build: (): Promise<void> => SharedIsolatedPlatform.build(),
};
