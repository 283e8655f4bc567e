// The IPC messages between `npm run bench:delivery` and its bare sender process.

export const BARE_RUN = 'bench.bare-sender.run';
export const BARE_RESULT = 'bench.bare-sender.result';

export interface BareRunRequest {
  type: typeof BARE_RUN;
  id: number;
  /** The SMTP sink's port on 127.0.0.1. */
  port: number;
  maxConnections: number;
  /** Upgrade with STARTTLS (the sink offers it), as the delivery service does by default. */
  starttls: boolean;
  /** DKIM-sign with an RSA-2048 `KeyObject` (d= this domain). */
  dkim: boolean;
  dkimDomain: string;
  /** Messages sent (and awaited) before the measured ones, on the same pool. */
  warmup: number;
  count: number;
  /** Recipients are `<prefix>w<i>@<domain>` (warm-up) and `<prefix>m<i>@<domain>` (measured). */
  recipientPrefix: string;
  recipientDomain: string;
  envelopeFrom: string;
  /** The raw message (CRLF lines) sent each time with a Message-ID of its own. */
  template: string;
}

export interface BareRunResult {
  type: typeof BARE_RESULT;
  id: number;
  /** From the first measured message handed to the pool to the last one accepted. */
  seconds: number;
  errors: number;
  firstError: string | null;
  /** CPU time of the sender process during the measured messages. */
  cpuMs: number;
}
