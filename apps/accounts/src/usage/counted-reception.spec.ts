import { UnprocessableMessageError } from '@envoi/shared-nats';

import { toCountedReception } from './counted-reception';

const MESSAGE_ID = '0195f3a4-3c6e-7a31-9b1e-2f4a5d6c7b8e';
const ACCOUNT_ID = '9d0cf9d0-4f5e-4674-bcf1-8ec39968b6e1';

function reception(overrides: Record<string, unknown> = {}, data: Record<string, unknown> = {}) {
  return {
    id: 'e1',
    type: 'message.reception',
    timestamp: '2026-11-25T19:30:00.000Z',
    data: { id: MESSAGE_ID, account_id: ACCOUNT_ID, event: 'on_reception', ...data },
    ...overrides,
  };
}

describe('toCountedReception', () => {
  it('takes the message, its account and its acceptance time', () => {
    expect(toCountedReception(reception())).toEqual({
      messageId: MESSAGE_ID,
      accountId: ACCOUNT_ID,
      receivedAt: new Date('2026-11-25T19:30:00.000Z'),
    });
  });

  it.each([
    ['another type', reception({ type: 'message.delivered' })],
    ['no message id', reception({}, { id: undefined })],
    ['a bad account id', reception({}, { account_id: 'acme' })],
    ['a bad timestamp', reception({ timestamp: 'yesterday' })],
    ['no envelope', null],
  ])('refuses %s as unprocessable', (_case, event) => {
    expect(() => toCountedReception(event)).toThrow(UnprocessableMessageError);
  });
});
