import { type ContractDocument, toContractDocument } from './contract-document';

/** Small v2 and v1 contracts shaped like the reference ones, for the unit tests of the harness. */

function json(schema: unknown) {
  return { description: 'JSON', content: { 'application/json': { schema } } };
}

const ERROR = json({ $ref: '#/components/schemas/ErrorResponse' });

export const FIXTURE_V2: ContractDocument = toContractDocument('v2', 'fixture v2', {
  openapi: '3.1.0',
  paths: {
    '/v2/ping': {
      get: {
        operationId: 'ping',
        responses: { '200': json({ $ref: '#/components/schemas/SuccessResponse' }), '401': ERROR },
      },
    },
    // Declared before the literal `/all`, which must still win for `/suppressions/all`.
    '/v2/accounts/{account_id}/suppressions/{email}': {
      delete: { operationId: 'deleteSuppression', responses: { '200': ERROR, '404': ERROR } },
    },
    '/v2/accounts/{account_id}/suppressions/all': {
      delete: { operationId: 'deleteAllSuppressions', responses: { '200': ERROR } },
    },
    '/v2/accounts/{account_id}/api-keys': {
      parameters: [{ name: 'account_id', in: 'path', required: true }],
      post: {
        operationId: 'createAPIKey',
        responses: {
          '201': json({
            allOf: [
              { $ref: '#/components/schemas/APIKey' },
              { type: 'object', required: ['secret_key'], properties: { secret_key: {} } },
            ],
          }),
          '400': ERROR,
          '409': { $ref: '#/components/responses/IdempotencyConflict' },
        },
      },
    },
    '/v2/accounts/{account_id}/api-keys/{key_id}': {
      get: {
        operationId: 'getAPIKey',
        responses: { '200': json({ $ref: '#/components/schemas/APIKey' }), '404': ERROR },
      },
    },
    '/v2/accounts/{account_id}/signal': {
      post: { operationId: 'signal', responses: { '204': { description: 'no content' } } },
    },
  },
  components: {
    schemas: {
      ErrorResponse: {
        type: 'object',
        additionalProperties: false,
        required: ['message'],
        properties: { message: { type: 'string' } },
        example: { message: 'Error message' },
      },
      SuccessResponse: {
        type: 'object',
        required: ['message'],
        properties: { message: { type: 'string' } },
      },
      APIKey: {
        type: 'object',
        required: ['id', 'created_at', 'last_used_at', 'label', 'scopes'],
        properties: {
          id: { type: 'string', format: 'uuid' },
          created_at: { type: 'string', format: 'date-time' },
          last_used_at: { type: ['string', 'null'], format: 'date-time' },
          label: { type: 'string' },
          website: { type: 'string', format: 'uri' },
          scopes: {
            type: 'array',
            items: {
              type: 'object',
              required: ['scope'],
              properties: { scope: { type: 'string' } },
            },
          },
        },
      },
    },
    responses: {
      IdempotencyConflict: json({ $ref: '#/components/schemas/ErrorResponse' }),
    },
  },
});

export const FIXTURE_V1: ContractDocument = toContractDocument('v1', 'fixture v1', {
  openapi: '3.1.0',
  paths: {
    '/v1/email/send': {
      post: {
        operationId: 'sendEmail',
        responses: {
          '201': json({ $ref: '#/components/schemas/SuccessfulResponse' }),
          '403': json({ $ref: '#/components/schemas/AccessDeniedResponse' }),
        },
      },
    },
  },
  components: {
    schemas: {
      SuccessfulResponse: {
        type: 'object',
        properties: { success_count: { type: 'integer' }, fail_count: { type: 'integer' } },
      },
      AccessDeniedResponse: { type: 'object', properties: { status: { type: 'string' } } },
    },
  },
});

/** A valid APIKey body. */
export function apiKeyBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: '8a4d3f0e-7a6b-4c1d-9e2f-0a1b2c3d4e5f',
    created_at: '2026-01-02T03:04:05.678Z',
    last_used_at: null,
    label: 'key',
    scopes: [{ scope: 'accounts:read' }],
    ...overrides,
  };
}
