import { linkedSignal } from './linked-signal';

describe('linkedSignal', () => {
  it('aborts with its parent', () => {
    const parent = new AbortController();
    const linked = linkedSignal(parent.signal);
    expect(linked.signal.aborted).toBe(false);
    parent.abort();
    expect(linked.signal.aborted).toBe(true);
  });

  it('starts aborted under an aborted parent', () => {
    const parent = new AbortController();
    parent.abort();
    expect(linkedSignal(parent.signal).signal.aborted).toBe(true);
  });

  it('aborts on its own without aborting its parent', () => {
    const parent = new AbortController();
    const linked = linkedSignal(parent.signal);
    linked.abort();
    expect(linked.signal.aborted).toBe(true);
    expect(parent.signal.aborted).toBe(false);
  });

  it('no longer follows its parent once unlinked', () => {
    const parent = new AbortController();
    const linked = linkedSignal(parent.signal);
    linked.unlink();
    parent.abort();
    expect(linked.signal.aborted).toBe(false);
  });
});
