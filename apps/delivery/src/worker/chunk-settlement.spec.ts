import { chunkSettlement } from './chunk-settlement';

describe('chunk settlement', () => {
  it('acknowledges a chunk whose messages are all settled, dropped ones included', () => {
    expect(
      chunkSettlement([
        { kind: 'ack', note: 'Delivered' },
        { kind: 'ack', note: 'Delivered' },
        { kind: 'term', note: 'account mismatch' },
      ]),
    ).toEqual({ kind: 'ack', note: '3 messages: 2× Delivered; 1× account mismatch' });
  });

  it('hands the chunk back at the soonest delay when any message must be looked at again', () => {
    expect(
      chunkSettlement([
        { kind: 'ack', note: 'Delivered' },
        { kind: 'nak', delayMs: 30_000, note: 'attempt in progress elsewhere' },
        { kind: 'nak', delayMs: 1_000, note: 'claim lost' },
      ]),
    ).toEqual({
      kind: 'nak',
      delayMs: 1_000,
      note: '3 messages: 1× Delivered; 1× attempt in progress elsewhere; 1× claim lost',
    });
  });
});
