import type { RpcClient } from '@envoi/shared-nats';

/** The part of the bus client the submission handlers use (a fake in unit tests). */
export type BusRequester = Pick<RpcClient, 'request'>;
