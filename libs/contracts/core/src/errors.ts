/**
 * Errors crossing the bus carry a code, never an HTTP status. Each domain declares its codes in
 * its own contract library; the gateway maps every code to HTTP in one exhaustive table.
 */
export interface RpcErrorBody {
  code: string;
  message: string;
}

export enum CommonErrorCode {
  /** The payload failed validation; the message names the problem. */
  ValidationFailed = 'common.validation_failed',
  /** A dependency (database, bus) is unavailable; retrying later may succeed. */
  Unavailable = 'common.unavailable',
  /** The requested resource does not exist in the caller's account. */
  NotFound = 'common.not_found',
  /** Anything unexpected: answered as 500 without internals. */
  Internal = 'common.internal',
}

export function isRpcErrorBody(value: unknown): value is RpcErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return typeof candidate['code'] === 'string' && typeof candidate['message'] === 'string';
}

/** An error raised by a service, identified by its code. */
export class CodedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CodedError';
  }

  /** Compares with a code of any domain's enum. */
  hasCode(code: string): boolean {
    return this.code === code;
  }

  toBody(): RpcErrorBody {
    return { code: this.code, message: this.message };
  }
}
