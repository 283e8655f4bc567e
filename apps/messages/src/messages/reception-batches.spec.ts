import type { MessageReceptionEvent } from '@envoi/contracts-messages';

import { receptionBatchEntries } from './reception-batches';

const ACCOUNT = '4cdd7bdd-294e-4762-892f-83d40abf5a87';
const TIMESTAMP = '2026-05-06T09:49:16.687Z';

function reception(n: number, subject = 'Hello'): MessageReceptionEvent {
  return {
    id: `event-${n}`,
    type: 'message.reception',
    timestamp: TIMESTAMP,
    data: {
      account_id: ACCOUNT,
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

function batchesOf(events: MessageReceptionEvent[]) {
  return receptionBatchEntries(ACCOUNT, TIMESTAMP, events).map((entry) => {
    const payload = entry.payload as { id: string; type: string; data: { events: unknown[] } };
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
});
