import { planDeliveries } from './delivery-plan';

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
