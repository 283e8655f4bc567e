import { WebhookPayloadValidator } from '@envoi/shared-testing';

import { assertConformsToContract, suiteContractChecker } from './contract-assertion';
import {
  API_NAMES,
  type ContractDocument,
  pointerToken,
  readContractDocument,
  resolvePointer,
  type ResponseObject,
} from './contract-document';
import { contractFile, DEVIATIONS_FILE, webhooksContractFile } from './contract-files';
import { readDeviations } from './deviations';
import { OperationMatcher } from './operation-matcher';
import { SchemaValidator } from './schema-validator';

/** The real openapi.yaml, openapi-v1.yaml and deviations.yaml the e2e suite checks against. */
describe('the reference contracts', () => {
  const documents = API_NAMES.map((api) => readContractDocument(api, contractFile(api)));
  const matcher = new OperationMatcher(documents);

  /** Every declared JSON response: its schema pointer and its example, if any. */
  function declaredResponses(document: ContractDocument) {
    return Object.entries(document.paths).flatMap(([template, item]) =>
      Object.entries(item).flatMap(([method, operation]) => {
        const responses = (operation as { responses?: Record<string, ResponseObject> }).responses;
        return Object.entries(responses ?? {}).map(([status, response]) => {
          const base =
            response.$ref ?? `#/paths/${pointerToken(template)}/${method}/responses/${status}`;
          const media = resolvePointer(document, `${base}/content/application~1json`) as
            { example?: unknown } | undefined;
          return {
            label: `${method.toUpperCase()} ${template} ${status}`,
            schema: media ? `${base}/content/application~1json/schema` : undefined,
            example: media?.example,
          };
        });
      }),
    );
  }

  it.each(API_NAMES)('%s: every response schema compiles and every example matches it', (api) => {
    const document = documents.find((candidate) => candidate.api === api) as ContractDocument;
    const validator = new SchemaValidator(documents);
    const responses = declaredResponses(document);
    expect(responses.length).toBeGreaterThan(0);
    const failures = responses.flatMap(({ label, schema, example }) =>
      schema === undefined || example === undefined
        ? []
        : validator.validate(api, schema, example).map((v) => `${label}: ${v.message}`),
    );
    expect(failures).toEqual([]);
  });

  it('routes each declared operation to itself', () => {
    for (const document of documents) {
      for (const [template, item] of Object.entries(document.paths)) {
        const path = template.replace(/\{[^}]+\}/g, 'x');
        for (const method of Object.keys(item)) {
          const found = matcher.match(method, path);
          expect(found && `${found.method} ${found.template.text}`).toBe(
            `${method.toUpperCase()} ${template}`,
          );
        }
      }
    }
  });

  it('takes deviations.yaml, every entry of which names a real operation and schema', () => {
    expect(readDeviations(DEVIATIONS_FILE).length).toBeGreaterThan(0);
    expect(() => suiteContractChecker()).not.toThrow();
  });

  it('fails a response that breaks it, naming the operation, status and error', () => {
    expect(() =>
      assertConformsToContract({
        method: 'GET',
        target: '/v2/ping',
        status: 200,
        headers: { 'content-type': 'application/json' },
        text: '{"pong":true}',
      }),
    ).toThrow(
      /GET \/v2\/ping answered 200\n {2}checked as ping \(GET \/v2\/ping\)\n {2}- \/message must have required property 'message'/,
    );
  });

  it('webhooks.yaml loads: a message event is checked against its payload schema', () => {
    const validator = new WebhookPayloadValidator(webhooksContractFile());
    expect(
      validator.eventViolations({ type: 'message.delivered', timestamp: 'now', data: {} }),
    ).toEqual(expect.arrayContaining([expect.stringContaining('/timestamp must match format')]));
  });
});
