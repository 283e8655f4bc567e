import { ipAllowListChangedEvent } from './ip-allow-list-event';

const change = {
  accountId: '5b0f8f8e-2d6a-4c1e-9c64-1f6a4e0b7a11',
  keyId: '7e1d2c3b-4a59-4687-9a0b-1c2d3e4f5a6b',
  label: 'Production',
  previous: [],
  next: ['192.0.2.0/24'],
  at: new Date('2026-11-25T11:00:00.000Z'),
};

describe('ipAllowListChangedEvent', () => {
  it('carries both lists, the time, and who changed it when a key did', () => {
    const event = ipAllowListChangedEvent({
      ...change,
      caller: { key_id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', ip: '192.0.2.7' },
    });
    expect(event).toMatchObject({
      type: 'api_key.ip_allow_list_changed',
      timestamp: '2026-11-25T11:00:00.000Z',
      data: {
        account_id: change.accountId,
        key_id: change.keyId,
        label: 'Production',
        previous_ip_allow_list: [],
        ip_allow_list: ['192.0.2.0/24'],
        changed_by_key_id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
        changed_from_ip: '192.0.2.7',
        changed_at: '2026-11-25T11:00:00.000Z',
      },
    });
  });

  it('has a new id each time, and no changer without a caller', () => {
    const first = ipAllowListChangedEvent(change);
    expect(first.id).not.toBe(ipAllowListChangedEvent(change).id);
    expect(first.data).toMatchObject({ changed_by_key_id: null, changed_from_ip: null });
  });
});
