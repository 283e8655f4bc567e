import { IsolatedPlatform as SharedIsolatedPlatform } from '@envoi/shared-testing';

export type { ChildHandle } from '@envoi/shared-testing';
export { WORKSPACE_ROOT } from '@envoi/shared-testing';

/**
 * A private slice of the platform for one delivery test file (see `IsolatedPlatform` in
 * @envoi/shared-testing): its own database and nats-server. DELIVERY_INT_KEEP_LOGS keeps its
 * directory and logs.
 */
export type IsolatedPlatform = SharedIsolatedPlatform;
export const IsolatedPlatform = {
  start: (): Promise<IsolatedPlatform> => SharedIsolatedPlatform.start({ owner: 'delivery' }),
  build: (): Promise<void> => SharedIsolatedPlatform.build(),
};
