import { readFileSync } from 'node:fs';

import { parse } from 'yaml';

/** The API versions Envoi serves, each described by its own OpenAPI document. */
export type ApiName = 'v2' | 'v1';

export const API_NAMES: readonly ApiName[] = ['v2', 'v1'];

/** An OpenAPI response object (or a `$ref` to one under `#/components/responses`). */
export interface ResponseObject {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
}

/** The parts of an OpenAPI operation object the harness reads. */
export interface OperationObject {
  operationId?: string;
  responses?: Record<string, ResponseObject>;
}

/** A parsed OpenAPI 3.1 document: its paths and components, as written in the file. */
export interface ContractDocument {
  api: ApiName;
  /** Where it was read from, for messages. */
  source: string;
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks the shape of an already parsed OpenAPI document. */
export function toContractDocument(
  api: ApiName,
  source: string,
  parsed: unknown,
): ContractDocument {
  if (!isRecord(parsed) || typeof parsed['openapi'] !== 'string') {
    throw new Error(`${source} is not an OpenAPI document`);
  }
  if (!parsed['openapi'].startsWith('3.1')) {
    throw new Error(`${source} is OpenAPI ${parsed['openapi']}; the harness reads 3.1 only`);
  }
  const { paths, components = {} } = parsed;
  if (!isRecord(paths) || !Object.values(paths).every(isRecord) || !isRecord(components)) {
    throw new Error(`${source} has no valid paths or components`);
  }
  return { api, source, paths: paths as ContractDocument['paths'], components };
}

/** Reads and parses one OpenAPI YAML file. */
export function readContractDocument(api: ApiName, file: string): ContractDocument {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(
      `cannot read the ${api} contract at ${file} (set E2E_CONTRACT_DIR to its folder): ${String(error)}`,
    );
  }
  return toContractDocument(api, file, parse(text));
}

/** The value at a JSON pointer (`#/a/b~1c`) in a document, or undefined. */
export function resolvePointer(document: unknown, pointer: string): unknown {
  if (!pointer.startsWith('#')) return undefined;
  const tokens = pointer
    .slice(1)
    .split('/')
    .slice(1)
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node = document;
  for (const token of tokens) {
    if (!isRecord(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node;
}

/** Escapes one JSON pointer token. */
export function pointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
