import { lookup as systemLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';

import { Agent, buildConnector, type Dispatcher } from 'undici';

import { checkOutboundUrl } from './check-outbound-url';
import { OutboundCall, type OutboundResult } from './outbound-call';
import { OutboundError } from './outbound-error';
import { blockedAddressReason, type OutboundPolicy } from './outbound-policy';

export type { OutboundRequestFailure, OutboundResponse, OutboundResult } from './outbound-call';

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

/** How long an idle kept-alive connection stays open, unless its server's keep-alive hint says. */
const IDLE_SOCKET_MS = 5_000;

/** How long a server's keep-alive hint may keep an idle connection open at most. */
const IDLE_SOCKET_MAX_MS = 30_000;

/** Target URLs whose check is remembered (a client calls the same few endpoints again and again). */
const CHECKED_URLS_KEPT = 10_000;

const resolveWithSystem: ResolveHost = (hostname) =>
  new Promise((resolve, reject) => {
    systemLookup(hostname, { all: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

/** The headers as undici takes them (name, value, name, value …), the JSON content type first. */
function headerList(headers: Readonly<Record<string, string>>): string[] {
  const list = ['content-type', 'application/json'];
  for (const name in headers) {
    if (name !== 'content-type') list.push(name, headers[name] ?? '');
  }
  return list;
}

/** A call not dispatched yet. */
interface PendingCall {
  options: Dispatcher.DispatchOptions;
  handler: OutboundCall;
}

/** Where a checked URL's requests go, or why it may not be called. */
type CheckedTarget = { ok: true; origin: string; path: string } | { ok: false; reason: string };

/**
 * POSTs JSON to customer endpoints without letting them reach the platform's own network.
 * A literal IP host is checked before connecting; a name is resolved here and every address it
 * resolves to is checked in the lookup the socket connects with, so the address checked is the
 * address connected to (a name that rebinds to a private address after it was saved is caught).
 * Calls go through an undici Agent (a pool of kept-alive connections per origin; redirects are
 * never followed), each connection made with that lookup.
 */
export class OutboundClient {
  private readonly policy: OutboundPolicy;
  private readonly agent: Agent;
  /** Each target URL's check: it depends only on the text and the policy, both fixed. */
  private readonly checkedUrls = new Map<string, CheckedTarget>();
  /** Calls made during this turn of the event loop, dispatched at its end. */
  private readonly pending: PendingCall[] = [];

  constructor(options: OutboundClientOptions) {
    this.policy = options.policy;
    this.agent = new Agent({
      keepAliveTimeout: IDLE_SOCKET_MS,
      keepAliveMaxTimeout: IDLE_SOCKET_MAX_MS,
      // Each call's own timeout bounds the whole exchange (OutboundCall): no timers of undici's
      // own per request and per chunk on top of it.
      headersTimeout: 0,
      bodyTimeout: 0,
      // One connector for every connection (rather than one per undici client): a new connection
      // resumes the TLS session of an earlier one to the same host. Every connection still
      // resolves its host through the guarded lookup.
      connect: buildConnector({
        lookup: this.guardedLookup(options.resolve ?? resolveWithSystem),
        ...(options.ca === undefined ? {} : { ca: options.ca }),
      }),
    });
  }

  postJson(
    url: string,
    headers: Readonly<Record<string, string>>,
    body: string,
    options: PostOptions,
  ): Promise<OutboundResult> {
    const started = performance.now();
    const target = this.check(url);
    if (!target.ok) {
      return Promise.resolve({
        type: 'failure',
        kind: 'blocked',
        message: target.reason,
        durationMs: Math.round(performance.now() - started),
      });
    }
    const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    return new Promise((resolve) => {
      this.dispatchNextTurn({
        options: {
          origin: target.origin,
          path: target.path,
          method: 'POST',
          headers: headerList(headers),
          body: Buffer.from(body, 'utf8'),
        },
        handler: new OutboundCall(resolve, started, maxResponseBytes, options.timeoutMs),
      });
    });
  }

  /**
   * Dispatches the calls made during one turn of the event loop together, at its end. undici
   * frees a kept-alive connection one turn after its response ended (setImmediate): a call made
   * as another one ends (its endpoint's next delivery) would otherwise find every connection
   * busy and open a new one, while the one just freed idles until it is closed.
   */
  private dispatchNextTurn(call: PendingCall): void {
    this.pending.push(call);
    if (this.pending.length > 1) return;
    setImmediate(() => {
      for (const { options, handler } of this.pending.splice(0)) {
        this.agent.dispatch(options, handler);
      }
    });
  }

  private check(url: string): CheckedTarget {
    const known = this.checkedUrls.get(url);
    if (known) return known;
    const checked = checkOutboundUrl(url, this.policy);
    const target: CheckedTarget = checked.ok
      ? {
          ok: true,
          origin: checked.url.origin,
          path: `${checked.url.pathname}${checked.url.search}`,
        }
      : checked;
    if (this.checkedUrls.size >= CHECKED_URLS_KEPT) this.checkedUrls.clear();
    this.checkedUrls.set(url, target);
    return target;
  }

  /** Closes kept-alive connections and fails the calls in flight (on shutdown). */
  async close(): Promise<void> {
    await this.agent.destroy();
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
