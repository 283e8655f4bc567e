import { Readable } from 'node:stream';

import { sessionSignal } from './smtp-sender';

describe('sessionSignal', () => {
  it('follows the attempt signal', () => {
    const attempt = new AbortController();
    const session = sessionSignal(attempt.signal, new AbortController().signal);
    attempt.abort();
    expect(session.signal.aborted).toBe(true);
  });

  it('stops a session on the gate while its data has not been read', () => {
    const gate = new AbortController();
    const session = sessionSignal(new AbortController().signal, gate.signal);
    session.watch(Readable.from(['data']));
    gate.abort();
    expect(session.signal.aborted).toBe(true);
  });

  it('lets a session whose data is being read run to its end', async () => {
    const gate = new AbortController();
    const session = sessionSignal(new AbortController().signal, gate.signal);
    const stream = session.watch(Readable.from(['data']));
    for await (const chunk of stream) expect(chunk).toBe('data');
    gate.abort();
    expect(session.signal.aborted).toBe(false);
    session.done();
  });

  it('stops a session on demand while its data has not been read, not after', async () => {
    const waiting = sessionSignal(new AbortController().signal, new AbortController().signal);
    waiting.watch(Readable.from(['data']));
    waiting.stop();
    expect(waiting.signal.aborted).toBe(true);

    const reading = sessionSignal(new AbortController().signal, new AbortController().signal);
    for await (const chunk of reading.watch(Readable.from(['data']))) expect(chunk).toBe('data');
    reading.stop();
    expect(reading.signal.aborted).toBe(false);
  });
});
