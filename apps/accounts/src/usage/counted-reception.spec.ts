import { UnprocessableMessageError } from '@envoi/shared-nats';

import { toCountedReceptions } from './counted-reception';

const MESSAGE_IDS = [
  '0195f3a4-3c6e-7a31-9b1e-2f4a5d6c7b8e',
  '0195f3a4-3c6e-7a31-9b1e-2f4a5d6c7b8f',
];
const ACCOUNT_ID = '9d0cf9d0-4f5e-4674-bcf1-8ec39968b6e1';

function sendReceptions(
  overrides: Record<string, unknown> = {},
  data: Record<string, unknown> = {},
) {
  return {
    id: 'e1',
    type: 'message.send_receptions',
    timestamp: '2026-11-25T19:30:00.000Z',
    data: { account_id: ACCOUNT_ID, message_ids: MESSAGE_IDS, ...data },
    ...overrides,
  };
}

const OTHER_ACCOUNT_ID = '3b7c0f52-1d8e-4a6b-9c2f-5e4d3a2b1c0d';

function reception(messageId: string, accountId: string, timestamp: string) {
  return {
    id: `reception-${messageId}`,
    type: 'message.reception',
    timestamp,
    data: { account_id: accountId, event: 'on_reception', id: messageId, is_bot: false },
  };
}

function receptionBatch(events: unknown[], overrides: Record<string, unknown> = {}) {
  return {
    id: 'b1',
    type: 'message.reception_batch',
    timestamp: '2026-11-25T19:30:00.000Z',
    data: { account_id: ACCOUNT_ID, events },
    ...overrides,
  };
}

describe('toCountedReceptions', () => {
  it('takes each message of the send, its account and the acceptance time', () => {
    const receivedAt = new Date('2026-11-25T19:30:00.000Z');
    expect(toCountedReceptions(sendReceptions())).toEqual([
      { messageId: MESSAGE_IDS[0], accountId: ACCOUNT_ID, receivedAt },
      { messageId: MESSAGE_IDS[1], accountId: ACCOUNT_ID, receivedAt },
    ]);
  });

  it.each([
    ['another type', sendReceptions({ type: 'message.reception' })],
    ['no message ids', sendReceptions({}, { message_ids: undefined })],
    ['an empty list of message ids', sendReceptions({}, { message_ids: [] })],
    ['a bad message id', sendReceptions({}, { message_ids: [MESSAGE_IDS[0], 'm2'] })],
    ['a bad account id', sendReceptions({}, { account_id: 'acme' })],
    ['a bad timestamp', sendReceptions({ timestamp: 'yesterday' })],
    ['no envelope', null],
  ])('refuses %s as unprocessable', (_case, event) => {
    expect(() => toCountedReceptions(event)).toThrow(UnprocessableMessageError);
  });

  it("takes each event of a reception batch: its message, account and send's acceptance time", () => {
    const batch = receptionBatch([
      reception(MESSAGE_IDS[0] ?? '', ACCOUNT_ID, '2026-11-30T23:59:59.999Z'),
      reception(MESSAGE_IDS[1] ?? '', OTHER_ACCOUNT_ID, '2026-12-01T00:00:00.000Z'),
    ]);
    expect(toCountedReceptions(batch)).toEqual([
      {
        messageId: MESSAGE_IDS[0],
        accountId: ACCOUNT_ID,
        receivedAt: new Date('2026-11-30T23:59:59.999Z'),
      },
      {
        messageId: MESSAGE_IDS[1],
        accountId: OTHER_ACCOUNT_ID,
        receivedAt: new Date('2026-12-01T00:00:00.000Z'),
      },
    ]);
  });

  const good = reception(MESSAGE_IDS[0] ?? '', ACCOUNT_ID, '2026-11-25T19:30:00.000Z');
  it.each([
    ['no events', receptionBatch([])],
    ['events that are not a list', receptionBatch([], { data: { events: 'none' } })],
    ['an event of another type', receptionBatch([good, { ...good, type: 'message.delivered' }])],
    [
      'an event without a message id',
      receptionBatch([{ ...good, data: { account_id: ACCOUNT_ID } }]),
    ],
    [
      'an event with a bad account id',
      receptionBatch([{ ...good, data: { id: MESSAGE_IDS[0], account_id: 'acme' } }]),
    ],
    ['an event with a bad timestamp', receptionBatch([{ ...good, timestamp: 'soon' }])],
    ['an event that is not an object', receptionBatch([good, 'm2'])],
  ])('refuses a reception batch with %s as unprocessable', (_case, event) => {
    expect(() => toCountedReceptions(event)).toThrow(UnprocessableMessageError);
  });
});
