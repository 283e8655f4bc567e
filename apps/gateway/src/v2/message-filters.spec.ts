import { ApiError } from '../errors/api-error';
import { readMessageFilters } from './message-filters';

function rejection(query: Record<string, string | string[]>): ApiError {
  try {
    readMessageFilters(query);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('readMessageFilters', () => {
  it('reads nothing from an empty query', () => {
    expect(readMessageFilters({})).toEqual({});
  });

  it('maps status names to their canonical form, whatever their case', () => {
    expect(readMessageFilters({ status: 'received, DELIVERED,sandbox bounced' }).status).toEqual([
      'Received',
      'Delivered',
      'Sandbox Bounced',
    ]);
  });

  it('rejects an unknown status naming it', () => {
    const error = rejection({ status: 'Delivered,Exploded' });
    expect(error.status).toBe(400);
    expect(error.message).toBe('unknown status: Exploded');
  });

  it('splits tags and caps them at 20', () => {
    expect(readMessageFilters({ tags: 'a, b,,c' }).tags).toEqual(['a', 'b', 'c']);
    const tooMany = Array.from({ length: 21 }, (_, index) => `t${index}`).join(',');
    expect(rejection({ tags: tooMany }).status).toBe(400);
  });

  it('passes text filters through and ignores empty ones', () => {
    expect(
      readMessageFilters({
        sender: 'a@example.com',
        recipient: '',
        subject: 'Hi',
        message_id_header: '<x@y>',
      }),
    ).toEqual({ sender: 'a@example.com', subject: 'Hi', message_id_header: '<x@y>' });
  });

  it('accepts RFC 3339 times and rejects anything else', () => {
    expect(
      readMessageFilters({
        from_time: '2026-11-01T00:00:00Z',
        to_time: '2026-11-02T00:00:00+01:00',
      }),
    ).toEqual({ from_time: '2026-11-01T00:00:00Z', to_time: '2026-11-02T00:00:00+01:00' });
    for (const value of ['yesterday', '2026-11-01', '2026-13-01T00:00:00Z', '1700000000']) {
      expect(rejection({ from_time: value }).status).toBe(400);
    }
  });

  it('rejects a time range that ends before it starts', () => {
    expect(
      rejection({ from_time: '2026-11-02T00:00:00Z', to_time: '2026-11-01T00:00:00Z' }).message,
    ).toBe('from_time must not be after to_time');
  });

  it('rejects a filter given twice', () => {
    expect(rejection({ sender: ['a@x.com', 'b@x.com'] }).message).toBe(
      'sender may be given only once',
    );
  });
});
