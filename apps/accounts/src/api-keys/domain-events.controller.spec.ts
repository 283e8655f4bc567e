import { UnprocessableMessageError } from '@envoi/shared-nats';

import { toDomainDeletion } from './domain-events.controller';

const DATA = {
  domain_id: '6a0b9a38-0000-4000-8000-00000000000d',
  account_id: '6a0b9a38-0000-4000-8000-0000000000aa',
  domain: 'Mail.Example.com.',
  deleted_at: '2026-03-04T05:06:07.000Z',
};

function event(overrides: Record<string, unknown> = {}, data: unknown = DATA): unknown {
  return {
    id: '6a0b9a38-0000-4000-8000-0000000000ee',
    type: 'domain.deleted',
    timestamp: DATA.deleted_at,
    data,
    ...overrides,
  };
}

function failure(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('toDomainDeletion', () => {
  it('returns the event data, with the domain name normalised', () => {
    expect(toDomainDeletion(event())).toEqual({ ...DATA, domain: 'mail.example.com' });
  });

  it('ignores fields it does not know', () => {
    expect(toDomainDeletion(event({ extra: 1 }, { ...DATA, more: true }))).toEqual({
      ...DATA,
      domain: 'mail.example.com',
    });
  });

  it.each([
    ['another event type', event({ type: 'domain.dns_error' })],
    ['no envelope', null],
    ['a string', 'domain.deleted'],
    ['no data', { id: 'e', type: 'domain.deleted' }],
    ['a domain id that is not a uuid', event({}, { ...DATA, domain_id: 'example.com' })],
    ['no account', event({}, { ...DATA, account_id: undefined })],
    ['a domain that is not a string', event({}, { ...DATA, domain: 42 })],
    ['a deletion time that is not a time', event({}, { ...DATA, deleted_at: 'yesterday' })],
  ])('declares %s unprocessable (never retried)', (_case, input) => {
    expect(failure(() => toDomainDeletion(input))).toBeInstanceOf(UnprocessableMessageError);
  });
});
