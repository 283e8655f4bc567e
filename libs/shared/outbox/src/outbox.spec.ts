import { EVENTS_STREAM, type StreamEvent, type StreamSubject } from '@envoi/contracts-core';

import { OUTBOX_BATCH_KEY, outboxBatchEntry } from './outbox';

const subject: StreamSubject<StreamEvent<'t.a', { n: number }>> = {
  kind: 'stream',
  stream: EVENTS_STREAM,
  name: 'events.t.a',
};

describe('outboxBatchEntry', () => {
  it('carries the events in order under the reserved key, on a row of its own id', () => {
    const events = [1, 2].map((n) => ({
      id: `e${n}`,
      type: 't.a' as const,
      timestamp: 't',
      data: { n },
    }));

    expect(outboxBatchEntry(subject, 'row', events)).toEqual({
      id: 'row',
      subject,
      payload: { [OUTBOX_BATCH_KEY]: events },
    });
  });

  it('refuses an empty batch, which would publish nothing', () => {
    expect(() => outboxBatchEntry(subject, 'row', [])).toThrow('outbox batch row: no event');
  });
});
