import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import type { ApiResponse } from '../support/api-client';
import { expectError } from '../support/expect-error';

interface KeyPage {
  object: string;
  data: { id: string }[];
  pagination: { has_more: boolean; next_cursor?: string; previous_cursor?: string };
}

const LIMIT_MESSAGE = 'limit must be between 1 and 100';

function list(session: AccountSession, query = ''): Promise<ApiResponse<KeyPage>> {
  return session.api.get<KeyPage>(session.path(`/api-keys${query}`));
}

function ids(response: ApiResponse<KeyPage>): string[] {
  return response.body.data.map((key) => key.id);
}

/** A session whose account holds five keys; `newestFirst` lists their ids newest first. */
async function fiveKeys(): Promise<{ session: AccountSession; newestFirst: string[] }> {
  const session = await createAccountSession();
  const created: string[] = [session.created.api_key.id];
  for (let i = 0; i < 4; i++) created.push((await createKey(session, ['accounts:read'])).id);
  return { session, newestFirst: created.reverse() };
}

function alter(cursor: string): string {
  const index = 5;
  const replacement = cursor[index] === 'A' ? 'B' : 'A';
  return cursor.slice(0, index) + replacement + cursor.slice(index + 1);
}

describe('pagination of GET api-keys', () => {
  afterAll(() => closeSessions());

  it('answers a single default page without cursors', async () => {
    const { session, newestFirst } = await fiveKeys();
    const response = await list(session);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      object: 'list',
      data: expect.any(Array) as unknown,
      pagination: { has_more: false },
    });
    expect(ids(response)).toEqual(newestFirst);
  });

  it('walks forward with after, newest first, and back with before', async () => {
    const { session, newestFirst } = await fiveKeys();
    const first = await list(session, '?limit=2');
    expect(first.status).toBe(200);
    expect(ids(first)).toEqual(newestFirst.slice(0, 2));
    expect(first.body.pagination.has_more).toBe(true);
    expect(first.body.pagination.previous_cursor).toBeUndefined();
    expect(first.body.pagination.next_cursor).toEqual(expect.any(String));

    const second = await list(session, `?limit=2&after=${first.body.pagination.next_cursor}`);
    expect(second.status).toBe(200);
    expect(ids(second)).toEqual(newestFirst.slice(2, 4));
    expect(second.body.pagination.has_more).toBe(true);
    expect(second.body.pagination.previous_cursor).toEqual(expect.any(String));
    expect(second.body.pagination.next_cursor).toEqual(expect.any(String));

    const third = await list(session, `?limit=2&after=${second.body.pagination.next_cursor}`);
    expect(third.status).toBe(200);
    expect(ids(third)).toEqual(newestFirst.slice(4));
    expect(third.body.pagination.has_more).toBe(false);
    expect(third.body.pagination.previous_cursor).toEqual(expect.any(String));

    const back = await list(session, `?limit=2&before=${third.body.pagination.previous_cursor}`);
    expect(back.status).toBe(200);
    expect(ids(back)).toEqual(ids(second));

    const start = await list(session, `?limit=2&before=${second.body.pagination.previous_cursor}`);
    expect(start.status).toBe(200);
    expect(ids(start)).toEqual(ids(first));
  });

  it('accepts cursor as an alias of after', async () => {
    const { session, newestFirst } = await fiveKeys();
    const first = await list(session, '?limit=2');
    const next = first.body.pagination.next_cursor ?? '';
    const viaCursor = await list(session, `?limit=2&cursor=${next}`);
    const viaAfter = await list(session, `?limit=2&after=${next}`);
    expect(viaCursor.status).toBe(200);
    expect(ids(viaCursor)).toEqual(newestFirst.slice(2, 4));
    expect(ids(viaCursor)).toEqual(ids(viaAfter));
  });

  it.each(['0', '101', '-1', 'abc', '1.5'])('rejects limit=%p with 400', async (limit) => {
    const session = await createAccountSession();
    expectError(await list(session, `?limit=${limit}`), 400, LIMIT_MESSAGE);
  });

  it('accepts the limit bounds 1 and 100', async () => {
    const { session, newestFirst } = await fiveKeys();
    const one = await list(session, '?limit=1');
    expect(one.status).toBe(200);
    expect(ids(one)).toEqual(newestFirst.slice(0, 1));
    const hundred = await list(session, '?limit=100');
    expect(hundred.status).toBe(200);
    expect(ids(hundred)).toEqual(newestFirst);
  });

  it('rejects after and before together', async () => {
    const { session } = await fiveKeys();
    const first = await list(session, '?limit=2');
    const second = await list(session, `?limit=2&after=${first.body.pagination.next_cursor}`);
    const { next_cursor: next, previous_cursor: previous } = second.body.pagination;
    expectError(await list(session, `?limit=2&after=${next}&before=${previous}`), 400);
  });

  it('rejects garbage and altered cursors', async () => {
    const { session } = await fiveKeys();
    const next = (await list(session, '?limit=2')).body.pagination.next_cursor ?? '';
    expect(next).not.toBe('');
    expectError(await list(session, '?after=garbage'), 400);
    expectError(await list(session, '?before=garbage'), 400);
    expectError(await list(session, `?after=${alter(next)}`), 400);
    expectError(await list(session, `?before=${alter(next)}`), 400);
  });

  it('takes empty parameters as absent, as Go clients send unset ones (issue 11)', async () => {
    const { session, newestFirst } = await fiveKeys();
    for (const query of ['?after=', '?before=', '?cursor=', '?limit=', '?after=&before=&limit=']) {
      const response = await list(session, query);
      expect({ query, status: response.status, ids: ids(response) }).toEqual({
        query,
        status: 200,
        ids: newestFirst,
      });
    }
  });

  it('rejects a cursor issued to another account', async () => {
    const { session: other } = await fiveKeys();
    const foreign = (await list(other, '?limit=2')).body.pagination.next_cursor ?? '';
    expect(foreign).not.toBe('');
    const { session } = await fiveKeys();
    const response = await list(session, `?limit=2&after=${foreign}`);
    expectError(response, 400);
    for (const id of ids(await list(other))) expect(response.text).not.toContain(id);
  });

  it('keeps a cursor valid after the key it points at is deleted', async () => {
    const { session, newestFirst } = await fiveKeys();
    const first = await list(session, '?limit=2');
    const deleted = await session.api.delete(session.path(`/api-keys/${newestFirst[1]}`));
    expect(deleted.status).toBe(200);
    const second = await list(session, `?limit=2&after=${first.body.pagination.next_cursor}`);
    expect(second.status).toBe(200);
    expect(ids(second)).toEqual(newestFirst.slice(2, 4));
  });

  it('rejects a query parameter given twice', async () => {
    const session = await createAccountSession();
    expectError(await list(session, '?limit=1&limit=2'), 400);
  });
});
