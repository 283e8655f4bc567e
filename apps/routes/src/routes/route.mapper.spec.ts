import type { RouteEntity } from './route.entity';
import { toCreatedRouteRecord, toRouteRecord } from './route.mapper';

const ROUTE: RouteEntity = {
  id: '3b0f4f8e-8d2a-4a55-9c1e-0a4c3a0f8b11',
  seq: '7',
  accountId: '6c1d0f52-1f0b-4a3c-9a63-3b6f0e8a2d10',
  createdAt: new Date('2026-01-02T03:04:05.000Z'),
  updatedAt: new Date('2026-01-03T03:04:05.000Z'),
  name: 'Support',
  url: 'https://hooks.example.com/inbound',
  recipient: 'support@example.com',
  domainId: 'b7f3c1a2-5d4e-4f6a-8b9c-0d1e2f3a4b5c',
  domainName: 'example.com',
  enabled: true,
  attachments: true,
  headers: false,
  groupByMessageId: true,
  stripReplies: false,
  secretCiphertext: 'sealed',
  successCount: '12',
  errorCount: '3',
  errorsSinceLastSuccess: 1,
  lastRequestAt: new Date('2026-01-04T00:00:00.000Z'),
  temporary: false,
  streamed: false,
  streamSessionId: null,
  streamLeaseUntil: null,
  streamUsedAt: null,
};

describe('route mapper', () => {
  it('answers every field of the record (notes 2.8), never the secret nor internals', () => {
    expect(toRouteRecord(ROUTE)).toEqual({
      object: 'route',
      id: ROUTE.id,
      created_at: '2026-01-02T03:04:05.000Z',
      updated_at: '2026-01-03T03:04:05.000Z',
      name: 'Support',
      url: 'https://hooks.example.com/inbound',
      recipient: 'support@example.com',
      enabled: true,
      attachments: true,
      headers: false,
      group_by_message_id: true,
      strip_replies: false,
      success_count: 12,
      error_count: 3,
      errors_since_last_success: 1,
      last_request_at: '2026-01-04T00:00:00.000Z',
    });
    expect(toRouteRecord({ ...ROUTE, lastRequestAt: null }).last_request_at).toBeNull();
  });

  it('adds the secret to the creation record only', () => {
    expect(toCreatedRouteRecord(ROUTE, 'envoi-rtsec-x')).toMatchObject({ secret: 'envoi-rtsec-x' });
    expect(toRouteRecord(ROUTE)).not.toHaveProperty('secret');
  });
});
