import { planDeliveries, routeCallId } from './delivery-plan';

const PER_RECIPIENT = { id: 'r1', groupByMessageId: false };
const GROUPED = { id: 'r2', groupByMessageId: true };

describe('planDeliveries', () => {
  const recipients = [
    { address: 'a@example.com', route_ids: ['r1', 'r2'] },
    { address: 'b@example.com', route_ids: ['r1', 'r2', 'gone'] },
    { address: 'a@example.com', route_ids: ['r1'] },
  ];

  it('makes one call per recipient, or one per message when the route groups', () => {
    expect(planDeliveries(recipients, [PER_RECIPIENT, GROUPED])).toEqual([
      { route: PER_RECIPIENT, recipients: ['a@example.com'] },
      { route: PER_RECIPIENT, recipients: ['b@example.com'] },
      { route: GROUPED, recipients: ['a@example.com', 'b@example.com'] },
    ]);
  });

  it('makes none for a route deleted or disabled since RCPT', () => {
    expect(planDeliveries(recipients, [])).toEqual([]);
  });
});

describe('routeCallId', () => {
  const inboundId = '0b9e3c52-8b4f-4d7e-9f50-7d3c1f0f6a11';

  it('is a UUID, the same each time a call is planned', () => {
    const id = routeCallId(inboundId, 'r1', ['a@example.com']);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(routeCallId(inboundId, 'r1', ['a@example.com'])).toBe(id);
  });

  it('differs by message, route and recipients', () => {
    const id = routeCallId(inboundId, 'r1', ['a@example.com']);
    expect(routeCallId(inboundId, 'r2', ['a@example.com'])).not.toBe(id);
    expect(routeCallId(inboundId, 'r1', ['b@example.com'])).not.toBe(id);
    expect(routeCallId(inboundId, 'r1', ['a@example.com', 'b@example.com'])).not.toBe(id);
    expect(routeCallId('1c9e3c52-8b4f-4d7e-9f50-7d3c1f0f6a11', 'r1', ['a@example.com'])).not.toBe(
      id,
    );
  });
});
