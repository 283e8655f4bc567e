import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../errors/api-error';
import { UNAVAILABLE_MESSAGE, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../errors/http-errors.filter';
import { GatewayConfig } from '../gateway.config';
import { edgeRouteConfig, type IdempotencyMode } from '../http/edge-route';
import { LOGGER } from '../logger.provider';
import type { IdempotencyClaim, StoredRecord } from './idempotency.repository';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_MESSAGES,
  judgeExistingRecord,
  outcomeAction,
  readIdempotencyKey,
  REPLAYED_HEADER,
  type RequestFingerprint,
  requestFingerprint,
} from './idempotency-policy';
import { IdempotencyStore } from './idempotency-store';
import { ResponseCipher } from './response-cipher';

/** The claimed key of a request being executed. */
interface ClaimedExecution {
  claim: IdempotencyClaim;
  fingerprint: RequestFingerprint;
  mode: IdempotencyMode;
  settled: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received (JSON bodies), for the idempotency fingerprint. */
    rawBody?: Buffer;
    idempotency?: ClaimedExecution;
  }
}

const EMPTY_BODY = Buffer.alloc(0);
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

function cipherContext(claim: { accountId: string; key: string }): string {
  return `${claim.accountId}\n${claim.key}`;
}

function payloadBytes(payload: unknown): Buffer | null {
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (Buffer.isBuffer(payload)) return payload;
  if (payload === null || payload === undefined) return EMPTY_BODY;
  return null; // a stream: never produced by idempotent routes, and not storable
}

/**
 * `Idempotency-Key` at the edge (spec 7.5 and 8), as Fastify hooks around the Nest handler:
 * preHandler claims the key (after authentication, the allow list and the rate limit, once the
 * body is read) or answers from the stored record; onSend stores, holds or releases the outcome
 * before the response leaves; onResponse releases a claim whose response never reached onSend.
 */
@Injectable()
export class IdempotencyHooks {
  private readonly cipher: ResponseCipher;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.cipher = new ResponseCipher(config.IDEMPOTENCY_ENCRYPTION_KEY);
  }

  async preHandler(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | void> {
    const mode = edgeRouteConfig(request).idempotency;
    const principal = request.principal;
    if (mode === undefined || principal === undefined) return;
    const key = readIdempotencyKey(request.headers[IDEMPOTENCY_KEY_HEADER]);
    if (key === undefined) return;
    const fingerprint = requestFingerprint(
      request.method,
      request.url,
      request.rawBody ?? EMPTY_BODY,
    );
    const result = await this.store
      .claim(principal.account_id, key, fingerprint, this.config.IDEMPOTENCY_LEASE_MS)
      .catch((error: unknown) => {
        this.logger.warn({ requestId: request.id, err: error }, 'idempotency store unavailable');
        throw new ApiError(503, UNAVAILABLE_MESSAGE, {
          'retry-after': UNAVAILABLE_RETRY_AFTER_SECONDS,
        });
      });
    if (result.kind === 'claimed') {
      request.idempotency = { claim: result.claim, fingerprint, mode, settled: false };
      return;
    }
    const verdict = judgeExistingRecord(result.record, fingerprint);
    if (verdict.kind === 'mismatch') throw new ApiError(422, IDEMPOTENCY_MESSAGES.mismatch);
    if (verdict.kind === 'in-progress') {
      throw new ApiError(409, IDEMPOTENCY_MESSAGES.inProgress, {
        [REPLAYED_HEADER]: 'false',
        'retry-after': String(verdict.retryAfterSeconds),
      });
    }
    return this.replay(reply, result.record, { accountId: principal.account_id, key });
  }

  async onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const execution = request.idempotency;
    if (execution === undefined || execution.settled) return payload;
    execution.settled = true;
    await this.settle(execution, reply, payload).catch((error: unknown) => {
      // The response still goes out; the key stays in progress until its lease ends.
      this.logger.error({ requestId: request.id, err: error }, 'idempotency outcome not recorded');
    });
    return payload;
  }

  onResponse(request: FastifyRequest): void {
    const execution = request.idempotency;
    if (execution === undefined || execution.settled) return;
    execution.settled = true;
    this.store.release(execution.claim).catch((error: unknown) => {
      this.logger.error({ requestId: request.id, err: error }, 'idempotency key not released');
    });
  }

  private async settle(
    execution: ClaimedExecution,
    reply: FastifyReply,
    payload: unknown,
  ): Promise<void> {
    const action = outcomeAction(execution.mode, reply.statusCode);
    const body = payloadBytes(payload);
    if (action.kind === 'release' || body === null) return this.store.release(execution.claim);
    if (action.kind === 'hold') return this.store.hold(execution.claim);
    const contentType = reply.getHeader('content-type');
    await this.store.complete(execution.claim, {
      statusCode: reply.statusCode,
      contentType: typeof contentType === 'string' ? contentType : null,
      body: action.encrypted ? this.cipher.seal(body, cipherContext(execution.claim)) : body,
      encrypted: action.encrypted,
      ttlMs: action.encrypted
        ? this.config.IDEMPOTENCY_SECRET_TTL_MS
        : this.config.IDEMPOTENCY_TTL_MS,
    });
  }

  private replay(
    reply: FastifyReply,
    record: StoredRecord,
    owner: { accountId: string; key: string },
  ): FastifyReply {
    const stored = record.responseBody ?? EMPTY_BODY;
    const body = record.encrypted ? this.cipher.open(stored, cipherContext(owner)) : stored;
    return reply
      .status(record.statusCode ?? 200)
      .header('content-type', record.contentType ?? JSON_CONTENT_TYPE)
      .header(REPLAYED_HEADER, 'true')
      .send(body);
  }
}
