import { lookup as systemLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

import { checkOutboundUrl, type OutboundUrlCheck } from './check-outbound-url';
import { OutboundError, type OutboundErrorKind, outboundFailureOf } from './outbound-error';
import { blockedAddressReason, type OutboundPolicy } from './outbound-policy';
import { printablePrefix, RESPONSE_PREFIX_BYTES } from './response-prefix';

/** Resolves a host name to every address it has (the system resolver by default). */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

export interface OutboundClientOptions {
  policy: OutboundPolicy;
  /** Replaces the system resolver (tests map names to loopback addresses with it). */
  resolve?: ResolveHost;
  /** Certificate authorities trusted for https instead of the system's (tests' own CA). */
  ca?: string | Buffer;
}

export interface PostOptions {
  /** Bound on the whole exchange: resolving, connecting, sending and reading the response. */
  timeoutMs: number;
  /** The response body is read up to this many bytes; the connection is closed after. */
  maxResponseBytes?: number;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

/** An HTTP response; `ok` only for 2xx (a 3xx is never followed). */
export interface OutboundResponse {
  type: 'response';
  ok: boolean;
  status: number;
  /** The first 1 KB of the body, printable text only. */
  bodyPrefix: string;
  /** The body was longer than `maxResponseBytes` and was not read to its end. */
  truncated: boolean;
  durationMs: number;
}

/** No HTTP response: refused by the policy, unreachable, too slow, TLS failed... */
export interface OutboundRequestFailure {
  type: 'failure';
  kind: OutboundErrorKind;
  message: string;
  durationMs: number;
}

export type OutboundResult = OutboundResponse | OutboundRequestFailure;

/** How long an idle kept-alive connection stays open. */
const IDLE_SOCKET_MS = 5_000;

/** Target URLs whose check is remembered (a client calls the same few endpoints again and again). */
const CHECKED_URLS_KEPT = 10_000;

const resolveWithSystem: ResolveHost = (hostname) =>
  new Promise((resolve, reject) => {
    systemLookup(hostname, { all: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

/**
 * POSTs JSON to customer endpoints without letting them reach the platform's own network.
 * A literal IP host is checked before connecting; a name is resolved here and every address it
 * resolves to is checked in the lookup the socket connects with, so the address checked is the
 * address connected to (a name that rebinds to a private address after it was saved is caught).
 */
export class OutboundClient {
  private readonly policy: OutboundPolicy;
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  /** Each target URL's check: it depends only on the text and the policy, both fixed. */
  private readonly checkedUrls = new Map<string, OutboundUrlCheck>();

  constructor(options: OutboundClientOptions) {
    this.policy = options.policy;
    const lookup = this.guardedLookup(options.resolve ?? resolveWithSystem);
    this.httpAgent = new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, lookup });
    this.httpsAgent = new https.Agent({
      keepAlive: true,
      timeout: IDLE_SOCKET_MS,
      lookup,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
    });
  }

  postJson(
    url: string,
    headers: Readonly<Record<string, string>>,
    body: string,
    options: PostOptions,
  ): Promise<OutboundResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const checked = this.check(url);
    if (!checked.ok) {
      return Promise.resolve({
        type: 'failure',
        kind: 'blocked',
        message: checked.reason,
        durationMs: elapsed(),
      });
    }
    const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const payload = Buffer.from(body, 'utf8');
    const target = checked.url;
    const secure = target.protocol === 'https:';

    return new Promise((resolve) => {
      let settled = false;
      const settle = (result: OutboundResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const fail = (error: unknown) =>
        settle({ type: 'failure', ...outboundFailureOf(error), durationMs: elapsed() });

      const request = (secure ? https : http).request(target, {
        method: 'POST',
        agent: secure ? this.httpsAgent : this.httpAgent,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(payload.length),
        },
      });
      const timer = setTimeout(() => {
        fail(new OutboundError('timeout', `no complete response within ${options.timeoutMs} ms`));
        request.destroy();
      }, options.timeoutMs);

      request.on('error', fail);
      request.on('response', (response) => {
        const prefix: Buffer[] = [];
        let prefixBytes = 0;
        let received = 0;
        const finish = (truncated: boolean) => {
          const status = response.statusCode ?? 0;
          settle({
            type: 'response',
            ok: status >= 200 && status < 300,
            status,
            bodyPrefix: printablePrefix(Buffer.concat(prefix)),
            truncated,
            durationMs: elapsed(),
          });
        };
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (prefixBytes < RESPONSE_PREFIX_BYTES) {
            prefix.push(chunk.subarray(0, RESPONSE_PREFIX_BYTES - prefixBytes));
            prefixBytes = Math.min(RESPONSE_PREFIX_BYTES, prefixBytes + chunk.length);
          }
          if (received > maxResponseBytes) {
            finish(true);
            response.destroy();
          }
        });
        response.on('end', () => finish(false));
        response.on('error', fail);
      });
      request.end(payload);
    });
  }

  private check(url: string): OutboundUrlCheck {
    const known = this.checkedUrls.get(url);
    if (known) return known;
    const checked = checkOutboundUrl(url, this.policy);
    if (this.checkedUrls.size >= CHECKED_URLS_KEPT) this.checkedUrls.clear();
    this.checkedUrls.set(url, checked);
    return checked;
  }

  /** Closes kept-alive connections (on shutdown). */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** A `net` lookup that resolves with `resolve` and refuses any blocked address. */
  private guardedLookup(resolve: ResolveHost): LookupFunction {
    return (hostname, lookupOptions, callback) => {
      resolve(hostname).then(
        (addresses) => {
          const wanted = addresses.filter(
            (candidate) => !lookupOptions.family || candidate.family === lookupOptions.family,
          );
          if (wanted.length === 0) {
            const error = Object.assign(new Error(`${hostname} has no address`), {
              code: 'ENOTFOUND',
            });
            callback(error, '', 0);
            return;
          }
          for (const candidate of wanted) {
            const reason = blockedAddressReason(candidate.address, this.policy);
            if (reason !== null) {
              callback(new OutboundError('blocked', `${hostname} resolves to ${reason}`), '', 0);
              return;
            }
          }
          if (lookupOptions.all) callback(null, wanted);
          else callback(null, wanted[0].address, wanted[0].family);
        },
        (error: NodeJS.ErrnoException) => callback(error, '', 0),
      );
    };
  }
}
