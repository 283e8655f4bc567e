import type { Dispatcher } from 'undici';

import { OutboundCall, type OutboundResult } from './outbound-call';
import { OutboundError } from './outbound-error';

class FakeController implements Dispatcher.DispatchController {
  readonly abortedWith: Error[] = [];
  readonly paused = false;

  get aborted(): boolean {
    return this.abortedWith.length > 0;
  }

  get reason(): Error | null {
    return this.abortedWith[0] ?? null;
  }

  abort(reason: Error): void {
    this.abortedWith.push(reason);
  }

  pause(): void {
    // Never paused by these tests.
  }

  resume(): void {
    // Never paused by these tests.
  }
}

function startCall(maxResponseBytes = 64 * 1024, timeoutMs = 1_000) {
  const results: OutboundResult[] = [];
  const call = new OutboundCall(
    (result) => results.push(result),
    performance.now(),
    maxResponseBytes,
    timeoutMs,
  );
  return { call, results, controller: new FakeController() };
}

describe('OutboundCall', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers the response once it ends: status, printable prefix, not truncated', () => {
    const { call, results, controller } = startCall();

    call.onRequestStart(controller);
    call.onResponseStart(controller, 204);
    call.onResponseData(controller, Buffer.from('fine\u0000'));
    call.onResponseData(controller, Buffer.from(' thanks'));
    call.onResponseEnd();

    expect(results).toEqual([
      expect.objectContaining({
        type: 'response',
        ok: true,
        status: 204,
        bodyPrefix: 'fine thanks',
        truncated: false,
      }),
    ]);
    expect(controller.aborted).toBe(false);
  });

  it('a 3xx or 5xx is a response that is not ok', () => {
    const { call, results, controller } = startCall();

    call.onRequestStart(controller);
    call.onResponseStart(controller, 302);
    call.onResponseEnd();

    expect(results).toEqual([
      expect.objectContaining({ type: 'response', ok: false, status: 302 }),
    ]);
  });

  it('stops reading past the limit: truncated, and the exchange is aborted', () => {
    const { call, results, controller } = startCall(10);

    call.onRequestStart(controller);
    call.onResponseStart(controller, 500);
    call.onResponseData(controller, Buffer.from('123456'));
    call.onResponseData(controller, Buffer.from('7890ab'));
    call.onResponseError(controller, new Error('aborted'));

    expect(results).toEqual([
      expect.objectContaining({ type: 'response', status: 500, truncated: true }),
    ]);
    expect(controller.aborted).toBe(true);
  });

  it('keeps only the first 1 KB of the body', () => {
    const { call, results, controller } = startCall();

    call.onRequestStart(controller);
    call.onResponseStart(controller, 200);
    call.onResponseData(controller, Buffer.alloc(700, 'a'));
    call.onResponseData(controller, Buffer.alloc(700, 'b'));
    call.onResponseEnd();

    expect(results[0]).toMatchObject({ bodyPrefix: 'a'.repeat(700) + 'b'.repeat(324) });
  });

  it('times out a call that has not got a connection yet, and aborts it once it gets one', () => {
    const { call, results, controller } = startCall(64 * 1024, 300);

    jest.advanceTimersByTime(300);
    expect(results).toEqual([
      expect.objectContaining({
        type: 'failure',
        kind: 'timeout',
        message: 'no complete response within 300 ms',
      }),
    ]);

    call.onRequestStart(controller);
    expect(controller.abortedWith).toEqual([expect.any(OutboundError)]);
    call.onResponseError(controller, controller.abortedWith[0] ?? new Error('missing'));
    expect(results).toHaveLength(1);
  });

  it('times out a response that does not end, aborting the exchange; what comes after is ignored', () => {
    const { call, results, controller } = startCall(64 * 1024, 300);

    call.onRequestStart(controller);
    call.onResponseStart(controller, 200);
    call.onResponseData(controller, Buffer.from('partial'));
    jest.advanceTimersByTime(300);
    call.onResponseEnd();

    expect(results).toEqual([expect.objectContaining({ type: 'failure', kind: 'timeout' })]);
    expect(controller.aborted).toBe(true);
  });

  it('maps an error before any response to its kind, and stops the timer', () => {
    const { call, results, controller } = startCall();

    call.onResponseError(
      controller,
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    );
    jest.advanceTimersByTime(10_000);

    expect(results).toEqual([
      expect.objectContaining({ type: 'failure', kind: 'refused', message: 'connection refused' }),
    ]);
  });
});
