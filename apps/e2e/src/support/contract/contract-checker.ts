import {
  type ApiName,
  type ContractDocument,
  pointerToken,
  resolvePointer,
  type ResponseObject,
} from './contract-document';
import { type Deviation, pointerCovers } from './deviations';
import {
  describeOperation,
  type Operation,
  OperationMatcher,
  pathOf,
  PathTemplate,
} from './operation-matcher';
import { SchemaValidator } from './schema-validator';

const JSON_MEDIA_TYPE = 'application/json';

/** A response as the e2e client received it, with the request it answers. */
export interface Exchange {
  method: string;
  /** The request target as sent: path and query string. */
  target: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** The outcome of checking one exchange. */
export interface Verdict {
  /** What the response was checked against: an operation, or the route no operation declares. */
  subject: string;
  violations: string[];
  /** Ids of the deviations that excused something. */
  applied: string[];
}

/** What the contract (or a deviation standing in for it) expects of a response body. */
interface ExpectedResponse {
  api: ApiName;
  /** Pointer of the JSON schema of the body; absent when no body is declared. */
  schema?: string;
  /** Declared media types, when not JSON. */
  otherMediaTypes: string[];
  headers: string[];
}

/** A route deviation with its method and template parsed. */
interface RouteDeviation {
  deviation: Deviation;
  method: string;
  template: PathTemplate;
}

/** `/v1/...` is the v1 contract; everything else is v2. */
export function apiOfTarget(target: string): ApiName {
  return target.startsWith('/v1/') ? 'v1' : 'v2';
}

function declaredStatusKey(operation: Operation, status: number): string | undefined {
  return [String(status), `${String(status)[0]}XX`, 'default'].find(
    (key) => operation.responses[key] !== undefined,
  );
}

/** Checks responses against the contract documents, excused only by the given deviations. */
export class ContractChecker {
  private readonly matcher: OperationMatcher;
  private readonly validator: SchemaValidator;
  private readonly documents: Map<ApiName, ContractDocument>;
  private readonly routeDeviations: RouteDeviation[] = [];
  private readonly operationDeviations: Deviation[] = [];

  constructor(documents: readonly ContractDocument[], deviations: readonly Deviation[]) {
    this.documents = new Map(documents.map((document) => [document.api, document]));
    this.matcher = new OperationMatcher(documents);
    this.validator = new SchemaValidator(documents);
    for (const deviation of deviations) this.register(deviation);
  }

  /** Resolves a deviation against the contract; an entry that names nothing real is an error. */
  private register(deviation: Deviation): void {
    const fail: (problem: string) => never = (problem) => {
      throw new Error(`deviation ${deviation.id}: ${problem}`);
    };
    if (!this.documents.has(deviation.api)) fail(`no ${deviation.api} contract is loaded`);
    if (deviation.schema !== undefined) this.validator.prepare(deviation.api, deviation.schema);
    if (deviation.route !== undefined) {
      const [method = '', text = ''] = deviation.route.split(' ');
      if (apiOfTarget(text) !== deviation.api) fail(`${deviation.route} is not ${deviation.api}`);
      const declared = this.matcher.match(method, text.replace(/\{[^{}/]+\}/g, 'x'));
      if (declared?.api === deviation.api) {
        fail(`${deviation.route} is ${describeOperation(declared)}; name it as operation`);
      }
      this.routeDeviations.push({ deviation, method, template: new PathTemplate(text) });
      return;
    }
    if (deviation.operation !== '*') {
      const reference = deviation.operation ?? '';
      const operation = this.matcher.find(deviation.api, reference);
      if (!operation) fail(`the ${deviation.api} contract has no operation ${reference}`);
      const { pointer, status } = deviation;
      if (pointer === undefined && status !== undefined && declaredStatusKey(operation, status)) {
        fail(`${describeOperation(operation)} already declares ${status}`);
      }
    }
    this.operationDeviations.push(deviation);
  }

  check(exchange: Exchange): Verdict {
    const operation = this.matcher.match(exchange.method, exchange.target);
    return operation ? this.checkOperation(operation, exchange) : this.checkUnmatched(exchange);
  }

  private covers(deviation: Deviation, operation: Operation, status: number): boolean {
    return (
      deviation.api === operation.api &&
      (deviation.operation === '*' ||
        deviation.operation === operation.operationId ||
        deviation.operation === `${operation.method} ${operation.template.text}`) &&
      (deviation.status === undefined || deviation.status === status)
    );
  }

  private checkOperation(operation: Operation, exchange: Exchange): Verdict {
    const subject = describeOperation(operation);
    const applied: string[] = [];
    let expected: ExpectedResponse;
    const statusKey = declaredStatusKey(operation, exchange.status);
    if (statusKey !== undefined) {
      expected = this.declaredResponse(operation, statusKey);
    } else {
      const allowed = this.operationDeviations.find(
        (deviation) =>
          deviation.pointer === undefined && this.covers(deviation, operation, exchange.status),
      );
      if (!allowed) {
        const declared = Object.keys(operation.responses).join(', ');
        return {
          subject,
          applied,
          violations: [
            `status ${exchange.status} is not declared (declared: ${declared}) and no deviation allows it`,
          ],
        };
      }
      applied.push(allowed.id);
      expected = this.deviationResponse(allowed);
    }
    const excusers = this.operationDeviations.filter(
      (deviation) =>
        deviation.pointer !== undefined && this.covers(deviation, operation, exchange.status),
    );
    const violations = this.responseViolations(expected, exchange, (pointer) => {
      const excuser = excusers.find((deviation) => pointerCovers(deviation.pointer ?? '', pointer));
      if (excuser && !applied.includes(excuser.id)) applied.push(excuser.id);
      return excuser !== undefined;
    });
    return { subject, applied, violations };
  }

  private checkUnmatched(exchange: Exchange): Verdict {
    const method = exchange.method.toUpperCase();
    const subject = `no contract operation: ${method} ${pathOf(exchange.target)}`;
    const api = apiOfTarget(exchange.target);
    const route = this.routeDeviations.find(
      ({ deviation, method: routeMethod, template }) =>
        deviation.api === api &&
        routeMethod === method &&
        template.matches(exchange.target) &&
        deviation.status === exchange.status,
    );
    if (!route) {
      return {
        subject,
        applied: [],
        violations: [
          `the ${api} contract declares no ${method} on this path and no route deviation covers status ${exchange.status}; ` +
            `record one in deviations.yaml or pass { contract: 'skip' } for a deliberate call outside the contract`,
        ],
      };
    }
    const violations = this.responseViolations(
      this.deviationResponse(route.deviation),
      exchange,
      () => false,
    );
    return { subject, applied: [route.deviation.id], violations };
  }

  private declaredResponse(operation: Operation, statusKey: string): ExpectedResponse {
    const document = this.documents.get(operation.api);
    let pointer = `${operation.pointer}/responses/${pointerToken(statusKey)}`;
    let response = operation.responses[statusKey];
    if (response.$ref !== undefined) {
      pointer = response.$ref;
      response = resolvePointer(document, pointer) as ResponseObject;
    }
    const mediaTypes = Object.keys(response.content ?? {});
    return {
      api: operation.api,
      schema: mediaTypes.includes(JSON_MEDIA_TYPE)
        ? `${pointer}/content/${pointerToken(JSON_MEDIA_TYPE)}/schema`
        : undefined,
      otherMediaTypes: mediaTypes.filter((type) => type !== JSON_MEDIA_TYPE),
      headers: [],
    };
  }

  private deviationResponse(deviation: Deviation): ExpectedResponse {
    return {
      api: deviation.api,
      schema: deviation.schema,
      otherMediaTypes: [],
      headers: deviation.headers ?? [],
    };
  }

  /** Content type, JSON syntax, schema and required headers; `excused` may waive schema errors. */
  private responseViolations(
    expected: ExpectedResponse,
    exchange: Exchange,
    excused: (pointer: string) => boolean,
  ): string[] {
    const violations = expected.headers
      .filter((name) => exchange.headers[name] === undefined)
      .map((name) => `header ${name} is missing`);
    if (expected.schema === undefined) {
      if (expected.otherMediaTypes.length > 0) {
        violations.push(`declares only ${expected.otherMediaTypes.join(', ')}; not checked here`);
      } else if (exchange.text !== '') {
        violations.push('declares no body, but one was sent');
      }
      return violations;
    }
    const contentType = String(exchange.headers['content-type'] ?? '');
    if (!contentType.startsWith(JSON_MEDIA_TYPE)) {
      violations.push(`content-type is "${contentType}", not ${JSON_MEDIA_TYPE}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(exchange.text);
    } catch {
      violations.push(`body is not JSON: ${JSON.stringify(exchange.text.slice(0, 200))}`);
      return violations;
    }
    for (const violation of this.validator.validate(expected.api, expected.schema, body)) {
      if (!excused(violation.pointer)) violations.push(violation.message);
    }
    return violations;
  }
}
