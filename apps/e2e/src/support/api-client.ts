import { readFileSync } from 'node:fs';
import https from 'node:https';

import { assertConformsToContract, suiteContractChecker } from './contract/contract-assertion';
import { e2eEnvironment } from './environment';

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed JSON body (undefined when the body is not JSON). */
  body: T;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body` (bytes for a body that is not UTF-8). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** Source address of the connection: any 127.0.0.0/8 address, or ::1. */
  localAddress?: string;
  host?: string;
  /** Another gateway replica's port (default: the platform's gateway). */
  port?: number;
  /**
   * Every response is checked against the reference contract (apps/e2e/contract/deviations.yaml
   * lists the accepted differences). `'skip'` opts this one call out: only for a request that
   * deliberately leaves the contract, and say why next to it.
   */
  contract?: 'skip';
}

let ca: Buffer | undefined;

/**
 * A real HTTPS request to the gateway, trusting only the platform's certificate. The response is
 * checked against the contract; a violation throws, failing the test at the call.
 */
export async function request<T = unknown>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  // Loaded before the first request goes out, not while concurrent requests are in flight.
  const checker = options.contract === 'skip' ? undefined : suiteContractChecker();
  const response = await exchange<T>(method, path, options);
  if (checker) {
    const { status, headers, text } = response;
    assertConformsToContract({ method, target: path, status, headers, text }, checker);
  }
  return response;
}

function exchange<T>(
  method: string,
  path: string,
  options: RequestOptions,
): Promise<ApiResponse<T>> {
  const environment = e2eEnvironment();
  ca ??= readFileSync(environment.caFile);
  const payload =
    options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const headers: Record<string, string> = { ...options.headers };
  if (
    payload !== undefined &&
    !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')
  ) {
    headers['content-type'] = 'application/json';
  }
  const host = options.host ?? (options.localAddress?.includes(':') ? '::1' : '127.0.0.1');
  return new Promise((resolve, reject) => {
    const outgoing = https.request(
      {
        host,
        port: options.port ?? environment.httpsPort,
        method,
        path,
        headers,
        ca,
        servername: 'localhost',
        localAddress: options.localAddress,
        agent: false,
        timeout: 30_000,
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text.length > 0 ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            text,
            body: body as T,
          });
        });
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} ${path} timed out`)));
    outgoing.on('error', reject);
    if (payload !== undefined) outgoing.write(payload);
    outgoing.end();
  });
}

/** Requests made with one API key (Bearer) against the v2 API. */
export class KeyClient {
  constructor(
    readonly apiKey: string,
    private readonly defaults: Omit<RequestOptions, 'body'> = {},
  ) {}

  from(localAddress: string): KeyClient {
    return new KeyClient(this.apiKey, { ...this.defaults, localAddress });
  }

  send<T = unknown>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    return request<T>(method, path, {
      ...this.defaults,
      ...options,
      headers: {
        authorization: `Bearer ${this.apiKey}`,
        ...this.defaults.headers,
        ...options.headers,
      },
    });
  }

  get<T = unknown>(path: string, options?: RequestOptions) {
    return this.send<T>('GET', path, options);
  }
  post<T = unknown>(path: string, body?: unknown, options?: RequestOptions) {
    return this.send<T>('POST', path, { ...options, body });
  }
  put<T = unknown>(path: string, body?: unknown, options?: RequestOptions) {
    return this.send<T>('PUT', path, { ...options, body });
  }
  delete<T = unknown>(path: string, options?: RequestOptions) {
    return this.send<T>('DELETE', path, options);
  }
}
