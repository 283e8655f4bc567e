import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

import { NATS_CONNECTION, RpcClient, subscribeBroadcast } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';
import { WebSocketServer } from 'ws';

import { Authenticator } from '../auth/authenticator.service';
import { resourceDomainScope } from '../auth/scopes.guard';
import { ApiError } from '../errors/api-error';
import { toErrorResponse } from '../errors/http-errors.filter';
import { GatewayConfig } from '../gateway.config';
import { UUID_PATTERN } from '../http/request-context';
import { LOGGER } from '../logger.provider';
import { clientAddress } from './client-address';
import { CLOSE_CODES, ListenerSession } from './listener-session';
import { STREAM_KINDS, type StreamKind } from './stream-kinds';

const LISTEN_PATH = /^\/v2\/accounts\/([^/]+)\/([a-z]+)\/([^/]+)\/listen$/;
/** Pings a listener may miss before its attachment lapses (a crashed gateway frees it then). */
const LEASE_PINGS = 3;
const MIN_LEASE_MS = 1_000;
/** Listeners send nothing; a frame from one is refused beyond this. */
const MAX_CLIENT_FRAME_BYTES = 4_096;

interface Handshake {
  accountId: string;
  kind: StreamKind;
  targetId: string;
  secret: string | null;
  force: boolean;
}

const sessionKey = (kind: StreamKind, targetId: string): string => `${kind.name}:${targetId}`;

/** The handshake's path and query; an ApiError for what cannot be served. */
function parseHandshake(request: IncomingMessage): Handshake {
  const url = new URL(request.url ?? '/', 'https://gateway.invalid');
  const match = LISTEN_PATH.exec(url.pathname);
  if (!match) throw new ApiError(404, 'not found');
  const [, accountId = '', kindName = '', targetId = ''] = match;
  const kind = STREAM_KINDS.find((candidate) => candidate.name === kindName);
  if (!kind) throw new ApiError(404, 'not found');
  if (!UUID_PATTERN.test(accountId)) throw new ApiError(400, 'invalid account_id');
  if (!UUID_PATTERN.test(targetId)) throw new ApiError(400, `invalid ${kind.idName}`);
  const force = url.searchParams.get('force_reconnect');
  if (force !== null && force !== 'true' && force !== 'false') {
    throw new ApiError(400, 'force_reconnect must be true or false');
  }
  return {
    accountId: accountId.toLowerCase(),
    kind,
    targetId: targetId.toLowerCase(),
    secret: url.searchParams.get('api_secret_key'),
    force: force === 'true',
  };
}

/** A refused handshake: a plain HTTP response with the v2 error body. */
function refuse(socket: Duplex, status: number, message: string, headers: Record<string, string>) {
  const body = JSON.stringify({ message });
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

/**
 * The WebSockets of webhook and route streams (platform notes 1.12), on the gateway's HTTPS port:
 * the handshake authenticates `api_secret_key` like a bearer key, needs the read scope of the
 * target (`webhooks:read`, `routes:read`; a domain-scoped key: for all its domains) and attaches
 * the listener through the service owning it (one per target over every replica: 409 unless
 * `force_reconnect=true`); the bus tells each replica when events are buffered and when a
 * listener replaced one of its own.
 */
@Injectable()
export class StreamListeners implements OnModuleInit, OnModuleDestroy {
  private readonly sockets = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_CLIENT_FRAME_BYTES,
  });
  /** This replica's listeners, by kind and target (sessionKey). */
  private readonly sessions = new Map<string, ListenerSession>();
  private subscriptions: Subscription[] = [];

  constructor(
    private readonly authenticator: Authenticator,
    private readonly rpc: RpcClient,
    private readonly config: GatewayConfig,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.subscriptions = STREAM_KINDS.flatMap((kind) => this.subscribe(kind));
  }

  onModuleDestroy(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    for (const session of this.sessions.values()) {
      session.close(CLOSE_CODES.goingAway, 'the server is shutting down');
    }
    this.sockets.close();
  }

  /** Serves the WebSocket handshakes of `server`. */
  install(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => socket.destroy());
      void this.upgrade(request, socket, head);
    });
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const requestId = randomUUID();
    const sessionId = randomUUID();
    let handshake: Handshake;
    let replayUntilSeq: number;
    try {
      handshake = parseHandshake(request);
      const ip = clientAddress(
        request.socket.remoteAddress,
        request.headers['x-forwarded-for'],
        this.config.trustedProxies(),
      );
      const principal = await this.authenticator.authenticateKey(
        handshake.secret,
        ip,
        handshake.accountId,
        requestId,
      );
      const scope = resourceDomainScope(principal.scopeSet, handshake.kind.listenScopes);
      const attached = await this.rpc.request(
        handshake.kind.subjects.attach,
        {
          account_id: handshake.accountId,
          target_id: handshake.targetId,
          session_id: sessionId,
          force: handshake.force,
          lease_ms: this.leaseMs(),
          ...scope.restriction(),
        },
        { requestId },
      );
      replayUntilSeq = attached.replay_until_seq;
    } catch (error) {
      const response = toErrorResponse(error, this.logger, requestId);
      refuse(socket, response.status, response.message, response.headers);
      return;
    }
    this.sockets.handleUpgrade(request, socket, head, (webSocket) => {
      const { accountId, kind, targetId } = handshake;
      const listener = { accountId, kind, targetId, sessionId };
      const key = sessionKey(kind, targetId);
      const session = new ListenerSession(
        webSocket,
        listener,
        replayUntilSeq,
        {
          rpc: this.rpc,
          logger: this.logger,
          pingIntervalMs: this.config.WEBHOOK_STREAM_PING_INTERVAL_MS,
          leaseMs: this.leaseMs(),
        },
        (closed) => {
          if (this.sessions.get(key) === closed) this.sessions.delete(key);
        },
      );
      this.sessions.get(key)?.replaced();
      this.sessions.set(key, session);
    });
  }

  /** New events wake this replica's listener of the target; another's attach replaces it. */
  private subscribe(kind: StreamKind): Subscription[] {
    const onError = (error: unknown) =>
      this.logger.warn({ err: error, stream: kind.name }, 'stream notification failed');
    return [
      subscribeBroadcast(
        this.connection,
        kind.subjects.appended,
        (event) =>
          event.target_ids.forEach((id) => this.sessions.get(sessionKey(kind, id))?.notify()),
        onError,
      ),
      subscribeBroadcast(
        this.connection,
        kind.subjects.attached,
        (event) => {
          const session = this.sessions.get(sessionKey(kind, event.target_id));
          if (session && session.listener.sessionId !== event.session_id) session.replaced();
        },
        onError,
      ),
    ];
  }

  private leaseMs(): number {
    return Math.max(MIN_LEASE_MS, this.config.WEBHOOK_STREAM_PING_INTERVAL_MS * LEASE_PINGS);
  }
}
