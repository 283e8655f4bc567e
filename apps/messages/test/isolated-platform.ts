import { IsolatedPlatform as SharedIsolatedPlatform } from '@envoi/shared-testing';

export type { ChildHandle } from '@envoi/shared-testing';
export { WORKSPACE_ROOT } from '@envoi/shared-testing';

/**
 * A private slice of the platform for one messages test file (see `IsolatedPlatform` in
 * @envoi/shared-testing): its own database and nats-server. MESSAGES_INT_KEEP_LOGS keeps its
 * directory and logs.
 */
export type IsolatedPlatform = SharedIsolatedPlatform;
export const IsolatedPlatform = {
  start: (): Promise<IsolatedPlatform> => SharedIsolatedPlatform.start({ owner: 'messages' }),
  build: (): Promise<void> => SharedIsolatedPlatform.build(),
};
