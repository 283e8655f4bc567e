import http from 'node:http';
import https from 'node:https';

/** What came back from an endpoint. */
export interface TransportResponse {
  status: number;
  /** The start of the response body (at most RESPONSE_PREFIX_BYTES, as text). */
  bodyPrefix: string;
  durationMs: number;
}

/** Why no response came (timeout, refused, reset, bad URL …). */
export interface TransportFailure {
  error: string;
  durationMs: number;
}

export type TransportResult = TransportResponse | TransportFailure;

/** One POST to an endpoint; never throws. */
export abstract class WebhookTransport {
  abstract post(
    url: string,
    headers: Readonly<Record<string, string>>,
    body: string,
    timeoutMs: number,
  ): Promise<TransportResult>;
}

export const RESPONSE_PREFIX_BYTES = 1_024;
/** Read at most this much of a response; the rest is dropped with the connection. */
export const RESPONSE_READ_LIMIT_BYTES = 64 * 1_024;

export function isResponse(result: TransportResult): result is TransportResponse {
  return 'status' in result;
}

/**
 * Node's http/https client: the timeout bounds the whole call (connect, request, response), at
 * most 64 KB of the response is read, redirects are not followed (a 3xx is a failure).
 */
export class NodeWebhookTransport extends WebhookTransport {
  post(
    url: string,
    headers: Readonly<Record<string, string>>,
    body: string,
    timeoutMs: number,
  ): Promise<TransportResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise((resolve) => {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        resolve({ error: 'invalid URL', durationMs: 0 });
        return;
      }
      const client = target.protocol === 'https:' ? https : http;
      const payload = Buffer.from(body, 'utf8');
      const request = client.request(target, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(payload.length) },
        signal: AbortSignal.timeout(timeoutMs),
      });
      request.on('error', (error) => {
        const reason =
          error.name === 'AbortError' ? `timed out after ${timeoutMs} ms` : error.message;
        resolve({ error: reason.slice(0, 255), durationMs: elapsed() });
      });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let read = 0;
        const finish = () => {
          const bodyPrefix = Buffer.concat(chunks)
            .subarray(0, RESPONSE_PREFIX_BYTES)
            .toString('utf8');
          resolve({ status: response.statusCode ?? 0, bodyPrefix, durationMs: elapsed() });
        };
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (chunks.length === 0 || read - chunk.length < RESPONSE_PREFIX_BYTES)
            chunks.push(chunk);
          if (read >= RESPONSE_READ_LIMIT_BYTES) {
            finish();
            response.destroy();
          }
        });
        response.on('end', finish);
        response.on('error', (error) => {
          resolve({ error: error.message.slice(0, 255), durationMs: elapsed() });
        });
      });
      request.end(payload);
    });
  }
}
