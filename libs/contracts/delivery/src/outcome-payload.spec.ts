import { decodeDeliveryOutcomeEvent } from './outcome-payload';

const MESSAGE_ID = '0190f5c2-6c1e-7a3b-8c4d-1234567890ab';

function delivered(data: Record<string, unknown> = {}) {
  return {
    id: 'event-1',
    type: 'message.delivered',
    timestamp: '2030-01-01T00:00:01Z',
    data: {
      account_id: '5f0c6f7e-1d2b-4c3a-9e8f-0a1b2c3d4e5f',
      event: 'on_delivered',
      from: 'hello@sender.test',
      recipient: 'to@recipient.test',
      subject: 'Hi',
      message_id_header: `<${MESSAGE_ID}@sender.test>`,
      id: MESSAGE_ID,
      status: 'Delivered',
      attempt: {
        time: '2030-01-01T00:00:01Z',
        remote_host: 'mx.recipient.test',
        reply: '250 ok',
        status: 'Delivered',
        attempt: 1,
      },
      sandbox: false,
      ...data,
    },
  };
}

describe('decodeDeliveryOutcomeEvent: is_bot', () => {
  it('keeps is_bot, and reads an event published before it as false', () => {
    expect(decodeDeliveryOutcomeEvent(delivered({ is_bot: false }))).toMatchObject({
      ok: true,
      event: { data: { is_bot: false } },
    });
    expect(decodeDeliveryOutcomeEvent(delivered())).toMatchObject({
      ok: true,
      event: { data: { is_bot: false } },
    });
  });

  it('refuses an is_bot that is not a boolean', () => {
    expect(decodeDeliveryOutcomeEvent(delivered({ is_bot: 'no' }))).toMatchObject({
      ok: false,
      message: expect.stringContaining('is_bot') as unknown,
    });
  });
});
