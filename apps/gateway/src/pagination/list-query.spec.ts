import { ApiError } from '../errors/api-error';
import { CursorCodec } from './cursor-codec';
import { readPageRequest, toPaginatedList } from './list-query';

const ACCOUNT = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const OTHER_ACCOUNT = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const LIST = 'api-keys';

const codec = new CursorCodec('cursor-secret-of-at-least-32-chars!!');
const cursorAt = (position: string, account = ACCOUNT, list = LIST) =>
  codec.encode(account, list, position);

type Query = Parameters<typeof readPageRequest>[0];
const read = (query: Query) => readPageRequest(query, codec, ACCOUNT, LIST);

/** The ApiError a call throws; fails the test when it returns or throws anything else. */
function apiErrorOf(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('readPageRequest', () => {
  describe('limit', () => {
    it('defaults to 100', () => {
      expect(read({})).toEqual({ limit: 100 });
      expect(read({ limit: undefined })).toEqual({ limit: 100 });
    });

    it.each([
      ['1', 1],
      ['50', 50],
      ['100', 100],
      ['0100', 100],
    ])('accepts %j', (raw, limit) => {
      expect(read({ limit: raw })).toEqual({ limit });
    });

    it.each([
      '0',
      '101',
      '-1',
      'abc',
      '1.5',
      '1e2',
      '',
      ' 5',
      '5 ',
      '0x10',
      '+5',
      '99999',
      'Infinity',
    ])('rejects %j with 400', (raw) => {
      const error = apiErrorOf(() => read({ limit: raw }));
      expect(error.status).toBe(400);
      expect(error.message).toBe('limit must be between 1 and 100');
    });

    it('rejects a repeated limit', () => {
      const error = apiErrorOf(() => read({ limit: ['10', '20'] }));
      expect(error.status).toBe(400);
      expect(error.message).toBe('limit may be given only once');
    });
  });

  describe('cursors', () => {
    it('decodes after into the service position', () => {
      expect(read({ after: cursorAt('17') })).toEqual({ limit: 100, after: '17' });
    });

    it('decodes before into the service position', () => {
      expect(read({ before: cursorAt('17'), limit: '5' })).toEqual({ limit: 5, before: '17' });
    });

    it('reads cursor as an alias of after', () => {
      expect(read({ cursor: cursorAt('3') })).toEqual({ limit: 100, after: '3' });
    });

    it('accepts cursor and after when they are equal', () => {
      const cursor = cursorAt('3');
      expect(read({ cursor, after: cursor })).toEqual({ limit: 100, after: '3' });
    });

    it('rejects cursor and after when they differ', () => {
      const error = apiErrorOf(() => read({ cursor: cursorAt('3'), after: cursorAt('4') }));
      expect(error.status).toBe(400);
      expect(error.message).toBe('cursor is an alias of after; give only one of them');
    });

    it('rejects after together with before', () => {
      const error = apiErrorOf(() => read({ after: cursorAt('3'), before: cursorAt('9') }));
      expect(error.status).toBe(400);
      expect(error.message).toBe('after and before are mutually exclusive');
    });

    it('rejects cursor together with before', () => {
      const error = apiErrorOf(() => read({ cursor: cursorAt('3'), before: cursorAt('9') }));
      expect(error.status).toBe(400);
      expect(error.message).toBe('after and before are mutually exclusive');
    });

    it.each(['after', 'before', 'cursor'])('rejects a repeated %s', (name) => {
      const error = apiErrorOf(() => read({ [name]: [cursorAt('1'), cursorAt('1')] }));
      expect(error.status).toBe(400);
      expect(error.message).toBe(`${name} may be given only once`);
    });

    it.each([
      ['empty', ''],
      ['garbage', 'garbage'],
      ['an extra dot', `${cursorAt('1')}.x`],
      ['another account', cursorAt('1', OTHER_ACCOUNT)],
      ['another list', cursorAt('1', ACCOUNT, 'members')],
      ['a tampered signature', `${cursorAt('1').slice(0, -2)}xx`],
    ])('rejects an after cursor that is %s', (_name, after) => {
      const error = apiErrorOf(() => read({ after }));
      expect(error.status).toBe(400);
      expect(error.message).toBe('invalid after cursor');
    });

    it('rejects an invalid before cursor naming before', () => {
      const error = apiErrorOf(() => read({ before: 'garbage' }));
      expect(error.status).toBe(400);
      expect(error.message).toBe('invalid before cursor');
    });

    it('rejects an invalid cursor alias as an invalid after cursor', () => {
      const error = apiErrorOf(() => read({ cursor: cursorAt('1', OTHER_ACCOUNT) }));
      expect(error.status).toBe(400);
      expect(error.message).toBe('invalid after cursor');
    });

    it('ignores unrelated query parameters', () => {
      expect(read({ limit: '10', other: ['a', 'b'], domain: 'x' })).toEqual({ limit: 10 });
    });
  });
});

describe('toPaginatedList', () => {
  it('wraps the data without cursors when the page has no positions', () => {
    expect(toPaginatedList({ data: [1, 2], has_more: false }, codec, ACCOUNT, LIST)).toEqual({
      object: 'list',
      data: [1, 2],
      pagination: { has_more: false },
    });
  });

  it('builds only the next cursor when only the next position is given', () => {
    const list = toPaginatedList(
      { data: ['a'], has_more: true, next_position: '10' },
      codec,
      ACCOUNT,
      LIST,
    );
    expect(Object.keys(list.pagination).sort()).toEqual(['has_more', 'next_cursor']);
    expect(list.pagination.has_more).toBe(true);
    expect(codec.decode(list.pagination.next_cursor ?? '', ACCOUNT, LIST)).toBe('10');
  });

  it('builds only the previous cursor when only the previous position is given', () => {
    const list = toPaginatedList(
      { data: [], has_more: false, previous_position: '4' },
      codec,
      ACCOUNT,
      LIST,
    );
    expect(Object.keys(list.pagination).sort()).toEqual(['has_more', 'previous_cursor']);
    expect(codec.decode(list.pagination.previous_cursor ?? '', ACCOUNT, LIST)).toBe('4');
  });

  it('builds both cursors, bound to the account and list, readable by readPageRequest', () => {
    const list = toPaginatedList(
      { data: [], has_more: true, next_position: '20', previous_position: '11' },
      codec,
      ACCOUNT,
      LIST,
    );
    const { next_cursor: next, previous_cursor: previous } = list.pagination;
    expect(read({ after: next })).toEqual({ limit: 100, after: '20' });
    expect(read({ before: previous })).toEqual({ limit: 100, before: '11' });
    expect(codec.decode(next ?? '', OTHER_ACCOUNT, LIST)).toBeNull();
    expect(codec.decode(next ?? '', ACCOUNT, 'members')).toBeNull();
  });
});
