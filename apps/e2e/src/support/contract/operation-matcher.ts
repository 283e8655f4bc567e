import {
  type ApiName,
  type ContractDocument,
  type OperationObject,
  pointerToken,
  type ResponseObject,
} from './contract-document';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** One declared operation: a method on a path template of one contract. */
export interface Operation {
  api: ApiName;
  operationId: string;
  /** Upper case, as sent on the wire. */
  method: string;
  template: PathTemplate;
  /** JSON pointer of the operation object in its document (`#/paths/~1v2~1ping/get`). */
  pointer: string;
  responses: Record<string, ResponseObject>;
}

/** `operationId (GET /v2/ping)`, for messages. */
export function describeOperation(operation: Operation): string {
  return `${operation.operationId} (${operation.method} ${operation.template.text})`;
}

/** The path of a request target, without its query string. */
export function pathOf(target: string): string {
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

/** An OpenAPI path template; a `{param}` segment matches exactly one non-empty path segment. */
export class PathTemplate {
  private readonly segments: { literal: string | null }[];

  constructor(readonly text: string) {
    this.segments = text
      .split('/')
      .map((segment) => ({ literal: /^\{[^{}/]+\}$/.test(segment) ? null : segment }));
  }

  matches(path: string): boolean {
    const segments = pathOf(path).split('/');
    return (
      segments.length === this.segments.length &&
      this.segments.every(({ literal }, index) =>
        literal === null ? segments[index] !== '' : literal === segments[index],
      )
    );
  }

  /**
   * Orders templates so that, of two that match the same path, the one with a literal segment
   * where the other has a parameter comes first (`/suppressions/all` before `/suppressions/{id}`).
   */
  static bySpecificity(a: PathTemplate, b: PathTemplate): number {
    const length = Math.min(a.segments.length, b.segments.length);
    for (let index = 0; index < length; index++) {
      const aParam = a.segments[index]?.literal === null;
      const bParam = b.segments[index]?.literal === null;
      if (aParam !== bParam) return aParam ? 1 : -1;
    }
    return 0;
  }
}

function operationsOf(document: ContractDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, value]) => {
        const operation = value as OperationObject;
        return {
          api: document.api,
          operationId: operation.operationId ?? `${method.toUpperCase()} ${template}`,
          method: method.toUpperCase(),
          template: new PathTemplate(template),
          pointer: `#/paths/${pointerToken(template)}/${method}`,
          responses: operation.responses ?? {},
        };
      }),
  );
}

/** Finds the declared operation a request targets (method + path template; the query is ignored). */
export class OperationMatcher {
  private readonly operations: Operation[];

  constructor(documents: readonly ContractDocument[]) {
    this.operations = documents
      .flatMap(operationsOf)
      .sort((a, b) => PathTemplate.bySpecificity(a.template, b.template));
  }

  match(method: string, path: string): Operation | undefined {
    const upper = method.toUpperCase();
    return this.operations.find(
      (operation) => operation.method === upper && operation.template.matches(path),
    );
  }

  /** By operationId, or by `METHOD /template` exactly as the contract writes it. */
  find(api: ApiName, reference: string): Operation | undefined {
    return this.operations.find(
      (operation) =>
        operation.api === api &&
        (operation.operationId === reference ||
          `${operation.method} ${operation.template.text}` === reference),
    );
  }
}
