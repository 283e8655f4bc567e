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
});
