import { ApiError } from '../errors/api-error';
import { readRouteStreamTarget } from './route-stream.controller';

describe('readRouteStreamTarget', () => {
  const routeId = '6f1c4d0e-8a1b-4c2d-9e3f-0a1b2c3d4e5f';

  it('is a lowercased route_id or a recipient pattern', () => {
    expect(readRouteStreamTarget({ route_id: routeId.toUpperCase() })).toEqual({
      route_id: routeId,
    });
    expect(readRouteStreamTarget({ recipient: 'support@example.com' })).toEqual({
      recipient: 'support@example.com',
    });
  });

  it('refuses anything but exactly one of them with a 400', () => {
    for (const query of [
      {},
      { route_id: routeId, recipient: 'support@example.com' },
      { route_id: 'nope' },
      { route_id: [routeId, routeId] },
      { recipient: ['a@example.com', 'b@example.com'] },
      { webhook_id: routeId },
    ]) {
      expect(() => readRouteStreamTarget(query)).toThrow(ApiError);
      expect(() => readRouteStreamTarget(query)).toThrow(
        /exactly one|route_id|recipient|unknown query parameter/,
      );
    }
  });
});
