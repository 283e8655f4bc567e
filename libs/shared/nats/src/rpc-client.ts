import { randomUUID } from 'node:crypto';

import type { EventSubject, ReplyOf, RequestOf, RequestSubject } from '@envoi/contracts-core';
import { CodedError, CommonErrorCode, isRpcErrorBody } from '@envoi/contracts-core';
import { currentTraceContext, TRACE_HEADERS } from '@envoi/shared-observability';
import { ErrorCode, headers as natsHeaders, type NatsConnection, NatsError } from 'nats';

import { type BusLink, busLink } from './bus-link';
import {
  decodePacket,
  encodePacket,
  type NestEventPacket,
  type NestRequestPacket,
  type NestResponsePacket,
} from './nest-packet';

export const REQUEST_ID_HEADER = TRACE_HEADERS.requestId;

export interface RequestOptions {
  timeoutMs?: number;
  /** Overrides the current trace context's request id (the gateway's hooks run outside one). */
  requestId?: string;
}

/** A coded error returned by a service, or raised for an unreachable one. */
export class RpcError extends CodedError {}

/**
 * Typed request/reply and events over NATS. Replies carrying `{code, message}` errors reject with
 * an RpcError of that code; no responder, a timeout, or a connection that is not linked to the
 * bus right now (nothing is sent then) rejects with `common.unavailable`.
 */
export class RpcClient {
  private readonly link: BusLink;

  constructor(
    private readonly connection: NatsConnection,
    private readonly defaultTimeoutMs = 10_000,
  ) {
    this.link = busLink(connection);
  }

  async request<S extends RequestSubject<unknown, unknown>>(
    subject: S,
    payload: RequestOf<S>,
    options: RequestOptions = {},
  ): Promise<ReplyOf<S>> {
    const packet: NestRequestPacket<RequestOf<S>> = {
      id: randomUUID(),
      pattern: subject.name,
      data: payload,
    };
    if (!this.link.up) {
      throw new RpcError(CommonErrorCode.Unavailable, `${subject.name}: not connected to the bus`);
    }
    const headers = natsHeaders();
    const context = currentTraceContext();
    const requestId = options.requestId ?? context?.requestId;
    if (requestId) headers.set(TRACE_HEADERS.requestId, requestId);
    if (context) {
      headers.set(TRACE_HEADERS.traceparent, context.traceparent);
      if (context.accountId) headers.set(TRACE_HEADERS.accountId, context.accountId);
    }
    let reply;
    try {
      reply = await this.connection.request(subject.name, encodePacket(packet), {
        timeout: options.timeoutMs ?? this.defaultTimeoutMs,
        headers,
      });
    } catch (error) {
      throw unavailable(subject.name, error);
    }
    const response = decodePacket<NestResponsePacket<ReplyOf<S>>>(reply.data);
    if (response.err !== undefined && response.err !== null) {
      if (isRpcErrorBody(response.err)) throw new RpcError(response.err.code, response.err.message);
      throw new RpcError(CommonErrorCode.Internal, `${subject.name} failed`);
    }
    return response.response as ReplyOf<S>;
  }

  emit<S extends EventSubject<unknown>>(
    subject: S,
    event: S extends EventSubject<infer E> ? E : never,
  ): void {
    const packet: NestEventPacket<unknown> = { pattern: subject.name, data: event };
    this.connection.publish(subject.name, encodePacket(packet));
  }
}

function unavailable(subject: string, error: unknown): RpcError {
  if (error instanceof NatsError) {
    const reasons: Record<string, string> = {
      [ErrorCode.NoResponders]: 'no responders',
      [ErrorCode.Timeout]: 'timed out',
    };
    return new RpcError(
      CommonErrorCode.Unavailable,
      `${subject}: ${reasons[error.code] ?? error.code}`,
    );
  }
  return new RpcError(CommonErrorCode.Unavailable, `${subject}: ${String(error)}`);
}
