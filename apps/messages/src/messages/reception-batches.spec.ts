import type { MessageReceptionEvent } from '@envoi/contracts-messages';

import { receptionBatchEntries } from './reception-batches';

const ACCOUNT = '4cdd7bdd-294e-4762-892f-83d40abf5a87';
const OTHER_ACCOUNT = '0f6d5e0c-7a39-4c52-9d0e-3c1b7f2e8a41';
const TIMESTAMP = '2026-05-06T09:49:16.687Z';
const LATER = '2026-05-06T09:49:17.002Z';

function reception(
  n: number,
  subject = 'Hello',
  { account = ACCOUNT, timestamp = TIMESTAMP } = {},
): MessageReceptionEvent {
  return {
    id: `event-${n}`,
    type: 'message.reception',
    timestamp,
    data: {
      account_id: account,
      event: 'on_reception',
      from: 'sender@example.com',
      recipient: `to-${n}@example.net`,
      subject,
      message_id_header: `<m-${n}@example.com>`,
      id: `message-${n}`,
      is_bot: false,
    },
  };
}

interface BatchPayload {
  id: string;
  type: string;
  timestamp: string;
  data: { account_id: string; events: MessageReceptionEvent[] };
}

function batchesOf(events: MessageReceptionEvent[]): BatchPayload[] {
  return receptionBatchEntries(events).map((entry) => {
    const payload = entry.payload as BatchPayload;
    expect(payload.id).toBe(entry.id);
    expect(entry.subject.name).toBe('events.message.reception_batch.v1');
    return payload;
  });
}

describe('receptionBatchEntries', () => {
  it("puts a send's 100 receptions in one stream message, in order", () => {
    const events = Array.from({ length: 100 }, (_, n) => reception(n));
    const [batch, ...more] = batchesOf(events);
    expect(more).toEqual([]);
    expect(batch).toEqual({
      id: batch?.id,
      type: 'message.reception_batch',
      timestamp: TIMESTAMP,
      data: { account_id: ACCOUNT, events },
    });
  });

  it('starts another message after 100 events', () => {
    const events = Array.from({ length: 250 }, (_, n) => reception(n));
    const batches = batchesOf(events);
    expect(batches.map((batch) => batch.data.events.length)).toEqual([100, 100, 50]);
    expect(batches.flatMap((batch) => batch.data.events)).toEqual(events);
    expect(new Set(batches.map((batch) => batch.id)).size).toBe(3);
  });

  it('keeps a batch of long subjects far below the stream message limit', () => {
    const events = Array.from({ length: 100 }, (_, n) => reception(n, '\u0001'.repeat(998)));
    const batches = batchesOf(events);
    expect(batches.length).toBeGreaterThan(1);
    for (const batch of batches) {
      expect(Buffer.byteLength(JSON.stringify(batch))).toBeLessThan(512 * 1024);
    }
    expect(batches.flatMap((batch) => batch.data.events)).toEqual(events);
  });

  it('puts the receptions of several sends committed together in one stream message', () => {
    const first = [reception(0), reception(1)];
    const second = [reception(2, 'Later', { timestamp: LATER })];
    const [batch, ...more] = batchesOf([...first, ...second]);
    expect(more).toEqual([]);
    expect(batch?.timestamp).toBe(TIMESTAMP);
    // Each event keeps its own send's acceptance time, which decides its billing period.
    expect(batch?.data.events).toEqual([...first, ...second]);
  });

  it("gives each account its own batches, each account's events in order", () => {
    const events = [
      reception(0),
      reception(1, 'Hi', { account: OTHER_ACCOUNT, timestamp: LATER }),
      reception(2),
      reception(3, 'Hi', { account: OTHER_ACCOUNT, timestamp: LATER }),
    ];
    const batches = batchesOf(events);
    expect(
      batches.map((batch) => ({
        account: batch.data.account_id,
        timestamp: batch.timestamp,
        ids: batch.data.events.map((event) => event.id),
      })),
    ).toEqual([
      { account: ACCOUNT, timestamp: TIMESTAMP, ids: ['event-0', 'event-2'] },
      { account: OTHER_ACCOUNT, timestamp: LATER, ids: ['event-1', 'event-3'] },
    ]);
  });

  it('splits a group of many sends at 100 events', () => {
    const events = Array.from({ length: 16 * 10 }, (_, n) => reception(n));
    expect(batchesOf(events).map((batch) => batch.data.events.length)).toEqual([100, 60]);
  });

  it('publishes nothing for no events', () => {
    expect(receptionBatchEntries([])).toEqual([]);
  });
});
