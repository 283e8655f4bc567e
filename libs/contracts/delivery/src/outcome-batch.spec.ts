import { deliveryEventsOfMessage } from './outcome-batch';

describe('deliveryEventsOfMessage', () => {
  const first = { id: 'event-1', type: 'message.delivered', data: {} };
  const second = { id: 'event-2', type: 'message.bounced', data: {} };

  it("answers a batch's events, in order", () => {
    const batch = {
      id: 'batch-1',
      type: 'message.outcome_batch',
      data: { events: [first, second] },
    };

    expect(deliveryEventsOfMessage(batch)).toEqual({ ok: true, events: [first, second] });
  });

  it('answers any other message as its own one event, to decode as before', () => {
    expect(deliveryEventsOfMessage(first)).toEqual({ ok: true, events: [first] });
    expect(deliveryEventsOfMessage('text')).toEqual({ ok: true, events: ['text'] });
    expect(deliveryEventsOfMessage(null)).toEqual({ ok: true, events: [null] });
  });

  it.each([
    ['no data', { type: 'message.outcome_batch' }],
    ['no events', { type: 'message.outcome_batch', data: {} }],
    ['events not a list', { type: 'message.outcome_batch', data: { events: first } }],
    ['an empty list', { type: 'message.outcome_batch', data: { events: [] } }],
  ])('refuses a batch with %s', (_, batch) => {
    expect(deliveryEventsOfMessage(batch)).toEqual({
      ok: false,
      message: 'the outcome batch has no events',
    });
  });
});
