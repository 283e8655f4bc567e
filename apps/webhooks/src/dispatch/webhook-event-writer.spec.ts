import { sampleEvent } from '../deliveries-api/sample-events';
import { routeEvents } from './webhook-event-writer';

describe('routeEvents', () => {
  const event = sampleEvent(
    'message.delivered',
    '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9',
    new Date(),
  );
  const target = (webhookId: string, endpoint: boolean, streamed: boolean) => ({
    event,
    target: { webhookId, endpoint, streamed },
  });

  it('delivers to URLs, buffers for streams, both for a streamed webhook with a URL', () => {
    const routed = routeEvents([
      target('endpoint-only', true, false),
      target('stream-only', false, true),
      target('both', true, true),
    ]);
    expect(routed.deliveries.map((row) => row.webhookId)).toEqual(['endpoint-only', 'both']);
    expect(routed.streamed.map((row) => row.targetId)).toEqual(['stream-only', 'both']);
  });

  it('gives the stream exactly the body an endpoint receives', () => {
    const { deliveries, streamed } = routeEvents([target('both', true, true)]);
    expect(streamed[0]).toEqual({
      targetId: 'both',
      eventId: event.id,
      eventType: 'message.delivered',
      body: deliveries[0]?.body,
    });
    expect(JSON.parse(streamed[0]?.body ?? '')).toMatchObject({
      type: 'message.delivered',
      webhook_id: 'both',
    });
  });
});
