import { toContractDocument } from './contract-document';
import { apiKeyBody, FIXTURE_V1, FIXTURE_V2 } from './fixture-contract';
import { SchemaValidator } from './schema-validator';

const API_KEY = '#/components/schemas/APIKey';
const ERROR = '#/components/schemas/ErrorResponse';
const CREATED_KEY =
  '#/paths/~1v2~1accounts~1{account_id}~1api-keys/post/responses/201/content/application~1json/schema';

describe('SchemaValidator', () => {
  const validator = new SchemaValidator([FIXTURE_V2, FIXTURE_V1]);

  it('accepts a body that matches, null included where the type allows it', () => {
    expect(validator.validate('v2', API_KEY, apiKeyBody())).toEqual([]);
    expect(
      validator.validate('v2', API_KEY, apiKeyBody({ last_used_at: '2026-01-02T03:04:05Z' })),
    ).toEqual([]);
  });

  it('reports every error, pointing at the offending property and the schema it breaks', () => {
    const violations = validator.validate('v2', API_KEY, {
      ...apiKeyBody({ label: 7, scopes: [{}] }),
      id: undefined,
    });
    expect(violations).toEqual([
      {
        pointer: '/id',
        message: "/id must have required property 'id' (required at #/components/schemas/APIKey)",
      },
      {
        pointer: '/label',
        message: '/label must be string (type at #/components/schemas/APIKey/properties/label)',
      },
      {
        pointer: '/scopes/0/scope',
        message: expect.stringContaining(
          "/scopes/0/scope must have required property 'scope'",
        ) as unknown,
      },
    ]);
  });

  it('names an extra property of a closed schema', () => {
    expect(validator.validate('v2', ERROR, { message: 'x', code: 1 })).toEqual([
      expect.objectContaining({ pointer: '/code' }),
    ]);
    expect(validator.validate('v2', ERROR, 'oops')).toEqual([
      expect.objectContaining({
        pointer: '',
        message: expect.stringMatching(/^\(body\) must be object/) as unknown,
      }),
    ]);
  });

  it('enforces formats', () => {
    const wrong = apiKeyBody({ id: 'nope', created_at: 'yesterday', website: '' });
    expect(validator.validate('v2', API_KEY, wrong).map((violation) => violation.pointer)).toEqual([
      '/id',
      '/created_at',
      '/website',
    ]);
  });

  it('resolves #/components references from a schema inline in a path', () => {
    expect(validator.validate('v2', CREATED_KEY, apiKeyBody({ secret_key: 's' }))).toEqual([]);
    expect(validator.validate('v2', CREATED_KEY, apiKeyBody()).map((v) => v.pointer)).toEqual([
      '/secret_key',
    ]);
  });

  it('keeps the documents apart', () => {
    expect(
      validator.validate('v1', '#/components/schemas/AccessDeniedResponse', { status: 'x' }),
    ).toEqual([]);
    expect(() => validator.validate('v1', ERROR, {})).toThrow();
  });

  it('fails on a pointer that names no schema', () => {
    expect(() => validator.prepare('v2', '#/components/schemas/Nope')).toThrow();
  });

  it('refuses a keyword it does not know instead of ignoring it', () => {
    const document = toContractDocument('v2', 'typo', {
      openapi: '3.1.0',
      paths: {},
      components: { schemas: { Old: { type: 'integer', minimun: 1 } } },
    });
    expect(() => new SchemaValidator([document]).prepare('v2', '#/components/schemas/Old')).toThrow(
      /unknown keyword: "minimun"/,
    );
  });
});
