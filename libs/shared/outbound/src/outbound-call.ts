import type { Dispatcher } from 'undici';

import { OutboundError, outboundFailureOf } from './outbound-error';
import { printablePrefix, RESPONSE_PREFIX_BYTES } from './response-prefix';

/** An HTTP response; `ok` only for 2xx (a 3xx is never followed). */
export interface OutboundResponse {
  type: 'response';
  ok: boolean;
  status: number;
  /** The first 1 KB of the body, printable text only. */
  bodyPrefix: string;
  /** The body was longer than `maxResponseBytes` and was not read to its end. */
  truncated: boolean;
  durationMs: number;
}

/** No HTTP response: refused by the policy, unreachable, too slow, TLS failed... */
export interface OutboundRequestFailure {
  type: 'failure';
  kind: OutboundError['kind'];
  message: string;
  durationMs: number;
}

export type OutboundResult = OutboundResponse | OutboundRequestFailure;

/**
 * One request's exchange as undici reports it, turned into a single result: the first of the
 * response's end, the body passing `maxResponseBytes` (the connection is closed, not read on), an
 * error, or `timeoutMs` since the call started. A timeout aborts the exchange (closing its
 * connection), or, when it came while the request still waited for a connection, aborts it as
 * soon as it gets one, before anything is sent.
 */
export class OutboundCall implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private status = 0;
  private readonly prefix: Buffer[] = [];
  private prefixBytes = 0;
  private received = 0;
  private readonly timer: NodeJS.Timeout;
  private timedOut: OutboundError | undefined;

  constructor(
    private readonly resolve: (result: OutboundResult) => void,
    private readonly started: number,
    private readonly maxResponseBytes: number,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = new OutboundError('timeout', `no complete response within ${timeoutMs} ms`);
      this.fail(this.timedOut);
      this.controller?.abort(this.timedOut);
    }, timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.timedOut) controller.abort(this.timedOut);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.received += chunk.length;
    if (this.prefixBytes < RESPONSE_PREFIX_BYTES) {
      this.prefix.push(chunk.subarray(0, RESPONSE_PREFIX_BYTES - this.prefixBytes));
      this.prefixBytes = Math.min(RESPONSE_PREFIX_BYTES, this.prefixBytes + chunk.length);
    }
    if (this.received > this.maxResponseBytes) {
      this.finish(true);
      controller.abort(new OutboundError('network', 'the response body is over the limit'));
    }
  }

  onResponseEnd(): void {
    this.finish(false);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.fail(error);
  }

  private finish(truncated: boolean): void {
    this.settle({
      type: 'response',
      ok: this.status >= 200 && this.status < 300,
      status: this.status,
      bodyPrefix: printablePrefix(Buffer.concat(this.prefix)),
      truncated,
      durationMs: this.elapsed(),
    });
  }

  private fail(error: unknown): void {
    this.settle({ type: 'failure', ...outboundFailureOf(error), durationMs: this.elapsed() });
  }

  private settle(result: OutboundResult): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(result);
  }

  private elapsed(): number {
    return Math.round(performance.now() - this.started);
  }
}
