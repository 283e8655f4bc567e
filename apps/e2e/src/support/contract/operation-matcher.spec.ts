import { FIXTURE_V1, FIXTURE_V2 } from './fixture-contract';
import { describeOperation, OperationMatcher, pathOf, PathTemplate } from './operation-matcher';

const ACCOUNT = '/v2/accounts/0b7c0c55-0d5e-4f34-9d7e-7c1f0b3c5a11';

describe('OperationMatcher', () => {
  const matcher = new OperationMatcher([FIXTURE_V2, FIXTURE_V1]);
  const idOf = (method: string, path: string) => matcher.match(method, path)?.operationId;

  it('matches a literal path and a templated one', () => {
    expect(idOf('GET', '/v2/ping')).toBe('ping');
    expect(idOf('GET', `${ACCOUNT}/api-keys/42`)).toBe('getAPIKey');
    expect(idOf('POST', '/v1/email/send')).toBe('sendEmail');
  });

  it('ignores the query string', () => {
    expect(idOf('GET', '/v2/ping?api_key=x&limit=1')).toBe('ping');
  });

  it('prefers the literal segment over a parameter, whatever the declaration order', () => {
    expect(idOf('DELETE', `${ACCOUNT}/suppressions/all`)).toBe('deleteAllSuppressions');
    expect(idOf('DELETE', `${ACCOUNT}/suppressions/a@example.com`)).toBe('deleteSuppression');
  });

  it('matches a parameter to exactly one non-empty segment', () => {
    expect(idOf('GET', `${ACCOUNT}/api-keys/`)).toBeUndefined();
    expect(idOf('GET', `${ACCOUNT}/api-keys/1/2`)).toBeUndefined();
    expect(idOf('GET', '/v2/accounts//api-keys/1')).toBeUndefined();
    expect(idOf('GET', '/v2/ping/')).toBeUndefined();
  });

  it('needs the method to be declared on the path, in any case', () => {
    expect(idOf('get', '/v2/ping')).toBe('ping');
    expect(idOf('POST', '/v2/ping')).toBeUndefined();
    expect(idOf('GET', '/v2/nothing-here')).toBeUndefined();
  });

  it('skips path-item fields that are not methods', () => {
    expect(idOf('POST', `${ACCOUNT}/api-keys`)).toBe('createAPIKey');
  });

  it('finds an operation by id or by method and template, within one api', () => {
    expect(matcher.find('v2', 'getAPIKey')?.template.text).toBe(
      '/v2/accounts/{account_id}/api-keys/{key_id}',
    );
    expect(matcher.find('v2', 'GET /v2/accounts/{account_id}/api-keys/{key_id}')?.operationId).toBe(
      'getAPIKey',
    );
    expect(matcher.find('v1', 'getAPIKey')).toBeUndefined();
    expect(matcher.find('v2', 'GET /v2/accounts/{id}/api-keys/{key_id}')).toBeUndefined();
  });

  it('describes an operation by id, method and template', () => {
    const operation = matcher.match('GET', '/v2/ping');
    expect(operation && describeOperation(operation)).toBe('ping (GET /v2/ping)');
    expect(operation?.pointer).toBe('#/paths/~1v2~1ping/get');
  });
});

describe('PathTemplate', () => {
  it('orders a literal before a parameter at the first segment where they differ', () => {
    const templates = ['/a/{x}/c', '/a/b/{y}', '/a/b/c'].map((text) => new PathTemplate(text));
    expect(templates.sort(PathTemplate.bySpecificity).map((template) => template.text)).toEqual([
      '/a/b/c',
      '/a/b/{y}',
      '/a/{x}/c',
    ]);
  });
});

describe('pathOf', () => {
  it('drops the query string and fragment', () => {
    expect(pathOf('/v2/ping?x=1')).toBe('/v2/ping');
    expect(pathOf('/v2/ping#top')).toBe('/v2/ping');
    expect(pathOf('/v2/ping')).toBe('/v2/ping');
  });
});
