import { connectedFrame, eventFrame } from './stream-frames';
import { ROUTE_STREAM, WEBHOOK_STREAM } from './stream-kinds';

describe('webhook stream frames', () => {
  const listener = {
    accountId: '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9',
    kind: WEBHOOK_STREAM,
    targetId: '6f1c4d0e-8a1b-4c2d-9e3f-0a1b2c3d4e5f',
    sessionId: '1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d',
  };
  const now = new Date('2026-05-01T10:00:07.900Z');
  const payload = { type: 'message.opened', webhook_id: listener.targetId, data: { id: 'm' } };
  const record = {
    seq: 12,
    event_id: 'evt-1',
    event_type: 'message.opened',
    body: JSON.stringify(payload),
    created_at: '2026-05-01T10:00:03.500Z',
  };

  it('opens with connected, in Unix seconds', () => {
    expect(connectedFrame(listener, now)).toEqual({
      type: 'connected',
      session_id: listener.sessionId,
      stream: 'webhooks',
      timestamp: 1_777_629_607,
    });
  });

  it('carries the endpoint payload as data, with the delivery id in the metadata', () => {
    expect(eventFrame(listener, record, 0, now)).toEqual({
      type: 'event',
      event: {
        type: 'message.opened',
        stream_id: listener.targetId,
        account_id: listener.accountId,
        data: payload,
        metadata: { 'webhook-id': 'evt-1', seq: '12' },
        timestamp: 1_777_629_603,
      },
      session_id: listener.sessionId,
      stream: 'webhooks',
      timestamp: 1_777_629_607,
    });
  });

  it('replays what was buffered before the listener attached', () => {
    expect(eventFrame(listener, record, 12, now).type).toBe('replay');
    expect(eventFrame(listener, record, 11, now).type).toBe('event');
  });

  it('names the stream of its kind: routes for a route listener', () => {
    const routeListener = { ...listener, kind: ROUTE_STREAM };
    expect(connectedFrame(routeListener, now).stream).toBe('routes');
    expect(eventFrame(routeListener, record, 0, now)).toMatchObject({
      stream: 'routes',
      event: { stream_id: listener.targetId },
    });
  });
});
