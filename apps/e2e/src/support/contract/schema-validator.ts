import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

import { type ApiName, type ContractDocument, pointerToken } from './contract-document';

/**
 * OpenAPI 3.1 keywords that JSON Schema 2020-12 does not define: annotations only, they never
 * change the outcome. `paths` and `components` let a whole document be registered as one schema,
 * so `#/components/...` references resolve inside it. Any other unknown keyword fails to compile.
 */
const OPENAPI_KEYWORDS = ['paths', 'components', 'example', 'discriminator', 'xml', 'externalDocs'];

/** OpenAPI's `fqdn` format: dot-separated DNS labels. */
const FQDN =
  /^(?=.{1,253}\.?$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.?$/i;

/** One way a body fails its schema. */
export interface SchemaViolation {
  /** JSON pointer of the offending value in the body; for a missing or extra property, the property. */
  pointer: string;
  /** `/label must be string (type at #/components/schemas/APIKey/properties/label)` */
  message: string;
}

function schemaId(api: ApiName): string {
  return `contract:${api}`;
}

/** Maps every object of the documents to its JSON pointer, to say which schema an error is in. */
function indexLocations(documents: readonly ContractDocument[]): Map<object, string> {
  const locations = new Map<object, string>();
  const visit = (node: unknown, pointer: string) => {
    if (typeof node !== 'object' || node === null || locations.has(node)) return;
    locations.set(node, pointer);
    for (const [key, value] of Object.entries(node)) {
      visit(value, `${pointer}/${pointerToken(key)}`);
    }
  };
  for (const document of documents) {
    visit(document.paths, '#/paths');
    visit(document.components, '#/components');
  }
  return locations;
}

/** Validates bodies against schemas addressed by JSON pointer in the contract documents. */
export class SchemaValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  /** Where each schema object sits in its document; built on the first error. */
  private locations: Map<object, string> | undefined;

  constructor(private readonly documents: readonly ContractDocument[]) {
    this.ajv = new Ajv2020({
      allErrors: true,
      verbose: true, // errors carry their schema object, which toViolation locates
      strict: true,
      // OpenAPI schemas use `type: [string, 'null']` and keywords such as `required` in untyped
      // `anyOf` branches; both are valid JSON Schema.
      allowUnionTypes: true,
      strictTypes: false,
    });
    addFormats(this.ajv);
    this.ajv.addFormat('fqdn', FQDN);
    for (const keyword of OPENAPI_KEYWORDS) this.ajv.addKeyword(keyword);
    for (const document of documents) {
      this.ajv.addSchema({
        $id: schemaId(document.api),
        paths: document.paths,
        components: document.components,
      });
    }
  }

  /** Compiles (once) the schema at `pointer` (`#/components/schemas/X`) of the api's document. */
  private validator(api: ApiName, pointer: string): ValidateFunction {
    const key = `${schemaId(api)}${pointer}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.getSchema(key);
      if (!validate) throw new Error(`no schema at ${pointer} in the ${api} contract`);
      this.compiled.set(key, validate);
    }
    return validate;
  }

  /** Compiles the schema now, so a broken reference fails at load time rather than mid-suite. */
  prepare(api: ApiName, pointer: string): void {
    this.validator(api, pointer);
  }

  validate(api: ApiName, pointer: string, body: unknown): SchemaViolation[] {
    const validate = this.validator(api, pointer);
    return validate(body) ? [] : (validate.errors ?? []).map((error) => this.toViolation(error));
  }

  private toViolation(error: ErrorObject): SchemaViolation {
    const params = error.params as Record<string, unknown>;
    const property = [
      params['missingProperty'],
      params['additionalProperty'],
      params['unevaluatedProperty'],
    ].find((value): value is string => typeof value === 'string');
    const pointer =
      property === undefined
        ? error.instancePath
        : `${error.instancePath}/${pointerToken(property)}`;
    this.locations ??= indexLocations(this.documents);
    const schema =
      (error.parentSchema && this.locations.get(error.parentSchema)) ?? error.schemaPath;
    return {
      pointer,
      message: `${pointer || '(body)'} ${error.message ?? 'is invalid'} (${error.keyword} at ${schema})`,
    };
  }
}
