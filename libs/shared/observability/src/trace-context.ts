import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes, randomUUID } from 'node:crypto';

/** Who a unit of work is for and which request started it, carried across every hop. */
export interface TraceContext {
  /** The edge's request id (`X-Request-Id`): the one thing to grep for. */
  requestId: string;
  /** W3C trace context of this hop: `00-<trace id>-<span id>-<flags>`. */
  traceparent: string;
  accountId?: string;
}

/** The header names a context travels in: HTTP, NATS requests, outbox rows, stream messages. */
export const TRACE_HEADERS = {
  requestId: 'x-request-id',
  traceparent: 'traceparent',
  accountId: 'x-envoi-account-id',
} as const;

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const ACCOUNT_ID = /^[0-9a-f-]{36}$/i;

const storage = new AsyncLocalStorage<TraceContext>();

export function currentTraceContext(): TraceContext | undefined {
  return storage.getStore();
}

/** Runs `work` (and everything it starts) in `context`. */
export function runInTraceContext<T>(context: TraceContext, work: () => T): T {
  return storage.run(context, work);
}

const RANDOM_POOL_BYTES = 4_096;
let randomPool = Buffer.alloc(0);
let randomPoolOffset = 0;

/**
 * `bytes` random bytes in hex, taken from a pool refilled 4 KiB at a time: every stream message
 * and request starts a span, and a `randomBytes` call of its own per id costs more than the rest
 * of its trace context. Ids are never reused: each takes bytes no other took.
 */
export function randomHex(bytes: number): string {
  if (randomPoolOffset + bytes > randomPool.length) {
    randomPool = randomBytes(Math.max(RANDOM_POOL_BYTES, bytes));
    randomPoolOffset = 0;
  }
  const hex = randomPool.toString('hex', randomPoolOffset, randomPoolOffset + bytes);
  randomPoolOffset += bytes;
  return hex;
}

/** A traceparent starting a new trace. */
export function newTraceparent(): string {
  return `00-${randomHex(16)}-${randomHex(8)}-01`;
}

/** The next hop's traceparent: the same trace, a new span; a new trace for a missing or bad one. */
export function childTraceparent(parent: string | undefined): string {
  const match = parent === undefined ? null : TRACEPARENT.exec(parent);
  if (!match || match[1] === ZERO_TRACE || match[2] === ZERO_SPAN) return newTraceparent();
  return `00-${match[1]}-${randomHex(8)}-${match[3]}`;
}

/** The trace id of a traceparent, for log lines. */
export function traceIdOf(traceparent: string): string | undefined {
  return TRACEPARENT.exec(traceparent)?.[1];
}

/** Reads a header of a received message or request; undefined when it has none. */
export type HeaderRead = (header: string) => string | undefined;

/** The request id a message or request carries, when it is safe to keep. */
function carriedRequestId(read: HeaderRead): string | undefined {
  const requestId = read(TRACE_HEADERS.requestId);
  return requestId !== undefined && REQUEST_ID.test(requestId) ? requestId : undefined;
}

/** The account id a message or request carries, when it is safe to keep. */
function carriedAccountId(read: HeaderRead): string | undefined {
  const accountId = read(TRACE_HEADERS.accountId);
  return accountId !== undefined && ACCOUNT_ID.test(accountId) ? accountId : undefined;
}

/**
 * The context a received message or request carries (unsafe values dropped), continued as a
 * new span; a fresh request id and trace when it carries none.
 */
export function traceContextFrom(read: HeaderRead): TraceContext {
  const accountId = carriedAccountId(read);
  return {
    requestId: carriedRequestId(read) ?? randomUUID(),
    traceparent: childTraceparent(read(TRACE_HEADERS.traceparent)),
    ...(accountId === undefined ? {} : { accountId }),
  };
}

/**
 * The context of work done for several messages at once (a batch of stream messages), read from
 * their headers without continuing each one (their own contexts are made only when asked for):
 * a new span of their request when they all carry the same request id (one send's events), else
 * a request of its own. The account stays when they share it. Work on one of them runs in its
 * own context.
 */
export function sharedTraceContextFrom(reads: readonly HeaderRead[]): TraceContext {
  const [first] = reads;
  const requestId = first && carriedRequestId(first);
  const accountId = first && carriedAccountId(first);
  const shared = (header: string, value: string | undefined) =>
    value !== undefined && reads.every((read) => read(header) === value);
  const account = shared(TRACE_HEADERS.accountId, accountId) ? { accountId } : {};
  if (first && requestId !== undefined && shared(TRACE_HEADERS.requestId, requestId)) {
    return {
      requestId,
      traceparent: childTraceparent(first(TRACE_HEADERS.traceparent)),
      ...account,
    };
  }
  return { requestId: randomUUID(), traceparent: newTraceparent(), ...account };
}

/** The headers that carry `context` to the next hop, which continues the trace. */
export function traceHeaders(context: TraceContext): Record<string, string> {
  return {
    [TRACE_HEADERS.requestId]: context.requestId,
    [TRACE_HEADERS.traceparent]: context.traceparent,
    ...(context.accountId ? { [TRACE_HEADERS.accountId]: context.accountId } : {}),
  };
}

/** The fields every log line carries while a context is current. */
export function traceLogFields(): Record<string, string> {
  const context = storage.getStore();
  if (!context) return {};
  const fields: Record<string, string> = { request_id: context.requestId };
  const traceId = traceIdOf(context.traceparent);
  if (traceId) fields['trace_id'] = traceId;
  if (context.accountId) fields['account_id'] = context.accountId;
  return fields;
}
