import {
  childTraceparent,
  currentTraceContext,
  newTraceparent,
  randomHex,
  runInTraceContext,
  sharedTraceContextFrom,
  TRACE_HEADERS,
  traceContextFrom,
  traceHeaders,
  traceIdOf,
  traceLogFields,
} from './trace-context';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const ACCOUNT = '0b0c3c2e-6a53-4a49-9f44-2b8c4d1a9e10';

function reader(values: Record<string, string>) {
  return (name: string) => values[name];
}

describe('trace context', () => {
  it('makes valid W3C traceparents', () => {
    expect(newTraceparent()).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(newTraceparent()).not.toBe(newTraceparent());
  });

  it('continues a trace with a new span, and starts one for a missing or invalid parent', () => {
    const child = childTraceparent(PARENT);
    expect(traceIdOf(child)).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(child).not.toBe(PARENT);
    expect(child.endsWith('-01')).toBe(true);
    for (const bad of [undefined, 'garbage', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`]) {
      expect(traceIdOf(childTraceparent(bad))).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      expect(childTraceparent(bad)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    }
  });

  it('reads what a message carries and drops unsafe values', () => {
    const context = traceContextFrom(
      reader({
        [TRACE_HEADERS.requestId]: 'req-1',
        [TRACE_HEADERS.traceparent]: PARENT,
        [TRACE_HEADERS.accountId]: ACCOUNT,
      }),
    );
    expect(context.requestId).toBe('req-1');
    expect(traceIdOf(context.traceparent)).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(context.accountId).toBe(ACCOUNT);

    const unsafe = traceContextFrom(
      reader({ [TRACE_HEADERS.requestId]: 'a\nb', [TRACE_HEADERS.accountId]: 'x' }),
    );
    expect(unsafe.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(unsafe.accountId).toBeUndefined();
  });

  it('round-trips through headers', () => {
    const context = { requestId: 'req-2', traceparent: PARENT, accountId: ACCOUNT };
    const headers = traceHeaders(context);
    const next = traceContextFrom(reader(headers));
    expect(next.requestId).toBe('req-2');
    expect(next.accountId).toBe(ACCOUNT);
    expect(traceIdOf(next.traceparent)).toBe(traceIdOf(PARENT));
  });

  it('is current inside the work it wraps, across awaits, and gone outside', async () => {
    const context = { requestId: 'req-3', traceparent: PARENT, accountId: ACCOUNT };
    expect(currentTraceContext()).toBeUndefined();
    expect(traceLogFields()).toEqual({});
    await runInTraceContext(context, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      expect(currentTraceContext()).toBe(context);
      expect(traceLogFields()).toEqual({
        request_id: 'req-3',
        trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
        account_id: ACCOUNT,
      });
    });
    expect(currentTraceContext()).toBeUndefined();
  });

  describe('sharedTraceContextFrom', () => {
    const carried = (requestId: string, accountId?: string) =>
      reader({
        [TRACE_HEADERS.requestId]: requestId,
        [TRACE_HEADERS.traceparent]: PARENT,
        ...(accountId ? { [TRACE_HEADERS.accountId]: accountId } : {}),
      });

    it('continues the request its messages share, as a new span of its trace', () => {
      const shared = sharedTraceContextFrom([carried('req-1', ACCOUNT), carried('req-1', ACCOUNT)]);

      expect(shared.requestId).toBe('req-1');
      expect(traceIdOf(shared.traceparent)).toBe(traceIdOf(PARENT));
      expect(shared.traceparent).not.toBe(PARENT);
      expect(shared.accountId).toBe(ACCOUNT);
    });

    it('is a request of its own for messages of different requests, keeping a shared account', () => {
      const shared = sharedTraceContextFrom([carried('req-1', ACCOUNT), carried('req-2', ACCOUNT)]);

      expect(shared.requestId).not.toMatch(/^req-/);
      expect(traceIdOf(shared.traceparent)).not.toBe(traceIdOf(PARENT));
      expect(shared.accountId).toBe(ACCOUNT);
      expect(
        sharedTraceContextFrom([carried('req-1', ACCOUNT), carried('req-1')]),
      ).not.toHaveProperty('accountId');
    });

    it('is a request of its own for messages without a request id, or none at all', () => {
      const bare = reader({});
      const shared = sharedTraceContextFrom([bare, bare]);

      expect(shared.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(sharedTraceContextFrom([]).traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    });
  });
});

describe('randomHex', () => {
  it('gives that many random bytes in hex, never the same twice across pool refills', () => {
    // 8 bytes each: 2 000 ids take about four pools of 4 KiB.
    const ids = Array.from({ length: 2_000 }, () => randomHex(8));
    expect(ids.every((id) => /^[0-9a-f]{16}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('serves a request larger than the pool', () => {
    expect(randomHex(5_000)).toMatch(/^[0-9a-f]{10000}$/);
  });
});
