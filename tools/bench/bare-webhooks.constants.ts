// The IPC messages between `npm run bench:webhooks` and its bare sender process.
import type { BenchEndpoint } from './webhook-bench-events';

export const BARE_WEBHOOKS_RUN = 'bench.bare-webhooks.run';
export const BARE_WEBHOOKS_RESULT = 'bench.bare-webhooks.result';

export interface BareWebhooksRunRequest {
  type: typeof BARE_WEBHOOKS_RUN;
  id: number;
  endpoints: BenchEndpoint[];
  accountId: string;
  /** Event i comes from domains[i % domains.length]. */
  domains: string[];
  /** Events posted (and awaited) before the measured ones, on the same connections. */
  warmup: number;
  count: number;
  /** POSTs in flight at once (Envoi's: endpoints × WEBHOOK_ENDPOINT_CONCURRENCY). */
  concurrency: number;
  /** POSTs in flight to one endpoint at once (Envoi's WEBHOOK_ENDPOINT_CONCURRENCY). */
  endpointConcurrency: number;
  /** The receiver's certificate (self-signed), trusted as the only CA. */
  ca: string;
}

export interface BareWebhooksRunResult {
  type: typeof BARE_WEBHOOKS_RESULT;
  id: number;
  /** Event ids of the measured run, in order. */
  measuredEventIds: string[];
  posted: number;
  errors: number;
  firstError: string | null;
  /** CPU time of the sender process during the measured events. */
  cpuMs: number;
}
