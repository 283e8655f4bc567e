import { readFileSync } from 'node:fs';

import type { ValidateFunction } from 'ajv/dist/2020';
import Ajv2020 from 'ajv/dist/2020';
import { parse } from 'yaml';

import type { ApiName } from './contract-document';

/**
 * One deliberate (or, with `todo`, temporary) difference between Envoi and the contract. It
 * covers exactly one of:
 * - an undeclared `status` of one `operation` (or of every operation, `'*'`): allowed, and the
 *   body is validated against `schema` instead;
 * - schema violations at a body `pointer` of one `operation` (or `'*'`), optionally one `status`;
 * - a `route` (`METHOD /template`) that no contract operation declares, answering `status` with a
 *   body validated against `schema`.
 */
export interface Deviation {
  id: string;
  /** Which contract: v2 (openapi.yaml, the default) or v1 (openapi-v1.yaml). */
  api: ApiName;
  /** An operationId, `METHOD /template` as the contract writes it, or `*` for every operation. */
  operation?: string;
  /** `METHOD /template` of a request no contract operation declares. */
  route?: string;
  status?: number;
  /** JSON pointer into the body; a `*` segment matches any one segment (an array index). */
  pointer?: string;
  /** JSON pointer of a schema in the same contract (`#/components/schemas/ErrorResponse`). */
  schema?: string;
  /** Headers the response must carry (lower case), e.g. `retry-after` on a 503. */
  headers?: string[];
  /**
   * Why: the api.md section that mandates Envoi's behaviour, "Contract gap: …" when the contract
   * cannot be met without inventing data, or "Envoi bug, to fix".
   */
  reason: string;
  /** A known Envoi bug, listed so the suite stays green until it is fixed. */
  todo?: boolean;
}

const FILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['deviations'],
  properties: {
    deviations: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'reason'],
        properties: {
          id: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' },
          api: { enum: ['v2', 'v1'] },
          operation: { type: 'string', minLength: 1 },
          route: { type: 'string', pattern: '^[A-Z]+ /' },
          status: { type: 'integer', minimum: 100, maximum: 599 },
          pointer: { type: 'string', pattern: '^(/[^/]*)+$' },
          schema: { type: 'string', pattern: '^#/' },
          headers: {
            type: 'array',
            minItems: 1,
            items: { type: 'string', pattern: '^[a-z0-9-]+$' },
          },
          reason: { type: 'string', minLength: 1 },
          todo: { type: 'boolean' },
        },
      },
    },
  },
} as const;

const TODO_REASON = 'Envoi bug, to fix';
/** The contract cannot be met without inventing data (e.g. a required value the user never gave). */
const CONTRACT_GAP_REASON = 'Contract gap:';

let validateFile: ValidateFunction | undefined;

/** What is wrong with an entry's combination of fields, if anything. */
function combinationProblem(entry: Deviation): string | undefined {
  if ((entry.operation === undefined) === (entry.route === undefined)) {
    return 'needs exactly one of operation and route';
  }
  if (entry.pointer !== undefined) {
    if (entry.route !== undefined) return 'a route entry cannot excuse a pointer';
    if (entry.schema !== undefined || entry.headers !== undefined) {
      return 'a pointer entry excuses violations; it has no schema or headers';
    }
  } else if (entry.status === undefined || entry.schema === undefined) {
    return 'an entry without a pointer allows a status: it needs status and schema';
  }
  if (entry.todo) {
    if (!entry.reason.startsWith(TODO_REASON))
      return `a todo entry's reason starts "${TODO_REASON}"`;
  } else if (!/api\.md §\d/.test(entry.reason) && !entry.reason.startsWith(CONTRACT_GAP_REASON)) {
    return `the reason must cite the spec section it relies on (api.md §N) or start "${CONTRACT_GAP_REASON}"`;
  }
  return undefined;
}

/** Parses and checks the text of deviations.yaml. */
export function parseDeviations(text: string, source = 'deviations.yaml'): Deviation[] {
  const parsed: unknown = parse(text);
  validateFile ??= new Ajv2020({ allErrors: true }).compile(FILE_SCHEMA);
  if (!validateFile(parsed)) {
    const problems = validateFile.errors
      ?.map((error) => `${error.instancePath} ${error.message}`)
      .join('; ');
    throw new Error(`${source} is malformed: ${problems}`);
  }
  const entries = (parsed as { deviations: (Omit<Deviation, 'api'> & { api?: ApiName })[] })
    .deviations;
  const seen = new Set<string>();
  return entries.map((raw) => {
    const entry: Deviation = { ...raw, api: raw.api ?? 'v2' };
    if (seen.has(entry.id)) throw new Error(`${source}: duplicate id ${entry.id}`);
    seen.add(entry.id);
    const problem = combinationProblem(entry);
    if (problem) throw new Error(`${source}: ${entry.id} ${problem}`);
    return entry;
  });
}

/** Reads deviations.yaml. */
export function readDeviations(file: string): Deviation[] {
  return parseDeviations(readFileSync(file, 'utf8'), file);
}

/** Whether a deviation pointer covers a body pointer; a `*` token matches any one token. */
export function pointerCovers(pattern: string, pointer: string): boolean {
  const wanted = pattern.split('/');
  const actual = pointer.split('/');
  return (
    wanted.length === actual.length &&
    wanted.every((token, index) => token === '*' || token === actual[index])
  );
}
