import { apiOfTarget, ContractChecker, type Exchange } from './contract-checker';
import type { Deviation } from './deviations';
import { apiKeyBody, FIXTURE_V1, FIXTURE_V2 } from './fixture-contract';

const ACCOUNT = '/v2/accounts/0b7c0c55-0d5e-4f34-9d7e-7c1f0b3c5a11';
const ERROR_SCHEMA = '#/components/schemas/ErrorResponse';

function exchange(method: string, target: string, status: number, body: unknown): Exchange {
  return {
    method,
    target,
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    text: body === undefined ? '' : JSON.stringify(body),
  };
}

function deviation(fields: Partial<Deviation> & { id: string }): Deviation {
  return { api: 'v2', reason: 'api.md §7.1', ...fields };
}

function checker(...deviations: Deviation[]): ContractChecker {
  return new ContractChecker([FIXTURE_V2, FIXTURE_V1], deviations);
}

describe('ContractChecker', () => {
  describe('a declared operation and status', () => {
    it('accepts a body that matches the declared schema', () => {
      expect(checker().check(exchange('GET', '/v2/ping?x=1', 200, { message: 'pong' }))).toEqual({
        subject: 'ping (GET /v2/ping)',
        violations: [],
        applied: [],
      });
    });

    it('reports each schema violation', () => {
      const verdict = checker().check(
        exchange('GET', `${ACCOUNT}/api-keys/1`, 200, apiKeyBody({ id: 'x', label: 1 })),
      );
      expect(verdict.subject).toBe('getAPIKey (GET /v2/accounts/{account_id}/api-keys/{key_id})');
      expect(verdict.violations).toEqual([
        expect.stringMatching(/^\/id must match format "uuid"/),
        expect.stringMatching(/^\/label must be string/),
      ]);
    });

    it('follows a $ref to a shared response', () => {
      const path = `${ACCOUNT}/api-keys`;
      expect(checker().check(exchange('POST', path, 409, { message: 'busy' })).violations).toEqual(
        [],
      );
      expect(checker().check(exchange('POST', path, 409, { status: 'busy' })).violations).toEqual([
        expect.stringContaining("must have required property 'message'"),
        expect.stringContaining('must NOT have additional properties'),
      ]);
    });

    it('wants JSON with a JSON content type where a schema is declared', () => {
      const notJson = { ...exchange('GET', '/v2/ping', 200, undefined), text: 'pong' };
      expect(checker().check(notJson).violations).toEqual([
        expect.stringContaining('body is not JSON'),
      ]);
      const plain = {
        ...exchange('GET', '/v2/ping', 200, { message: 'pong' }),
        headers: { 'content-type': 'text/plain' },
      };
      expect(checker().check(plain).violations).toEqual([
        'content-type is "text/plain", not application/json',
      ]);
    });

    it('wants no body where none is declared', () => {
      const path = `${ACCOUNT}/signal`;
      expect(checker().check(exchange('POST', path, 204, undefined)).violations).toEqual([]);
      expect(checker().check(exchange('POST', path, 204, {})).violations).toEqual([
        'declares no body, but one was sent',
      ]);
    });

    it('checks /v1 against the v1 contract', () => {
      const verdict = checker().check(exchange('POST', '/v1/email/send', 403, { status: 'no' }));
      expect(verdict).toEqual({
        subject: 'sendEmail (POST /v1/email/send)',
        violations: [],
        applied: [],
      });
    });
  });

  describe('a status the operation does not declare', () => {
    const tooLarge = deviation({
      id: 'too-large',
      operation: '*',
      status: 413,
      schema: ERROR_SCHEMA,
    });

    it('is a violation that lists the declared statuses', () => {
      expect(checker().check(exchange('GET', '/v2/ping', 413, { message: 'big' }))).toEqual({
        subject: 'ping (GET /v2/ping)',
        applied: [],
        violations: ['status 413 is not declared (declared: 200, 401) and no deviation allows it'],
      });
    });

    it('is allowed by a deviation, whose schema the body must match', () => {
      const ok = checker(tooLarge).check(exchange('GET', '/v2/ping', 413, { message: 'big' }));
      expect(ok).toEqual({
        subject: 'ping (GET /v2/ping)',
        violations: [],
        applied: ['too-large'],
      });
      const bad = checker(tooLarge).check(exchange('GET', '/v2/ping', 413, { error: 'big' }));
      expect(bad.violations).toHaveLength(2);
    });

    it('needs the headers the deviation names', () => {
      const unavailable = deviation({
        id: 'unavailable',
        operation: 'GET /v2/ping',
        status: 503,
        schema: ERROR_SCHEMA,
        headers: ['retry-after'],
      });
      const response = exchange('GET', '/v2/ping', 503, { message: 'later' });
      expect(checker(unavailable).check(response).violations).toEqual([
        'header retry-after is missing',
      ]);
      response.headers['retry-after'] = '5';
      expect(checker(unavailable).check(response).violations).toEqual([]);
    });

    it('is allowed only for the operation and api the deviation names', () => {
      const onPing = deviation({
        id: 'on-ping',
        operation: 'ping',
        status: 413,
        schema: ERROR_SCHEMA,
      });
      const path = `${ACCOUNT}/api-keys/1`;
      expect(
        checker(onPing).check(exchange('GET', path, 413, { message: 'x' })).violations,
      ).toHaveLength(1);
      const v1 = deviation({
        ...tooLarge,
        api: 'v1',
        schema: '#/components/schemas/AccessDeniedResponse',
      });
      expect(
        checker(v1).check(exchange('GET', '/v2/ping', 413, { message: 'x' })).violations,
      ).toHaveLength(1);
    });
  });

  describe('a pointer deviation', () => {
    const website = deviation({
      id: 'website',
      operation: 'getAPIKey',
      status: 200,
      pointer: '/website',
    });

    it('excuses schema violations at that pointer only', () => {
      const path = `${ACCOUNT}/api-keys/1`;
      const excused = checker(website).check(
        exchange('GET', path, 200, apiKeyBody({ website: '' })),
      );
      expect(excused).toMatchObject({ violations: [], applied: ['website'] });
      const other = checker(website).check(
        exchange('GET', path, 200, apiKeyBody({ website: '', label: 3 })),
      );
      expect(other.violations).toEqual([expect.stringMatching(/^\/label/)]);
    });

    it('does not apply to another status or operation', () => {
      const elsewhere = deviation({ ...website, status: 201 });
      const path = `${ACCOUNT}/api-keys/1`;
      const verdict = checker(elsewhere).check(
        exchange('GET', path, 200, apiKeyBody({ website: '' })),
      );
      expect(verdict.violations).toHaveLength(1);
      const wildcard = deviation({ id: 'scopes', operation: '*', pointer: '/scopes/*/scope' });
      const scopes = apiKeyBody({ scopes: [{ scope: 1 }, { scope: 2 }] });
      expect(checker(wildcard).check(exchange('GET', path, 200, scopes))).toMatchObject({
        violations: [],
        applied: ['scopes'],
      });
    });
  });

  describe('a request no operation declares', () => {
    const probe = deviation({
      id: 'probe',
      route: 'GET /v2/nothing-here',
      status: 404,
      schema: ERROR_SCHEMA,
    });

    it('is a violation that says how to allow it', () => {
      const verdict = checker().check(exchange('GET', '/v2/nothing-here', 404, { message: 'x' }));
      expect(verdict.subject).toBe('no contract operation: GET /v2/nothing-here');
      expect(verdict.violations).toEqual([expect.stringContaining("{ contract: 'skip' }")]);
      const wrongMethod = checker().check(exchange('DELETE', '/v2/ping', 404, { message: 'x' }));
      expect(wrongMethod.violations).toHaveLength(1);
    });

    it('is allowed by a route deviation for its method, path and status, body checked', () => {
      expect(
        checker(probe).check(exchange('GET', '/v2/nothing-here?a=1', 404, { message: 'x' })),
      ).toEqual({
        subject: 'no contract operation: GET /v2/nothing-here',
        violations: [],
        applied: ['probe'],
      });
      expect(
        checker(probe).check(exchange('GET', '/v2/nothing-here', 404, {})).violations,
      ).toHaveLength(1);
      expect(
        checker(probe).check(exchange('GET', '/v2/nothing-here', 400, { message: 'x' })).violations,
      ).toHaveLength(1);
      expect(
        checker(probe).check(exchange('POST', '/v2/nothing-here', 404, { message: 'x' }))
          .violations,
      ).toHaveLength(1);
    });
  });

  describe('deviations that name nothing real', () => {
    it.each([
      [
        'an unknown operation',
        { operation: 'nope', status: 413, schema: ERROR_SCHEMA },
        /no operation nope/,
      ],
      [
        'a status the operation declares',
        { operation: 'ping', status: 401, schema: ERROR_SCHEMA },
        /already declares 401/,
      ],
      [
        'a route the contract declares',
        { route: 'GET /v2/accounts/{id}/api-keys/{key}', status: 404, schema: ERROR_SCHEMA },
        /is getAPIKey/,
      ],
      [
        'a route of the other api',
        { route: 'GET /v1/nothing', status: 404, schema: ERROR_SCHEMA },
        /is not v2/,
      ],
      [
        'a schema that does not exist',
        { operation: '*', status: 413, schema: '#/components/schemas/Nope' },
        /Nope/,
      ],
    ])('fail on %s', (_, fields, problem) => {
      expect(() => checker(deviation({ id: 'bad', ...fields }))).toThrow(problem);
    });
  });
});

describe('apiOfTarget', () => {
  it('is v1 under /v1/ and v2 otherwise', () => {
    expect(apiOfTarget('/v1/email/send')).toBe('v1');
    expect(apiOfTarget('/v2/ping')).toBe('v2');
    expect(apiOfTarget('/health')).toBe('v2');
  });
});
