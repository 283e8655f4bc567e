import { applyDecorators, HttpCode, Post } from '@nestjs/common';

import { DOMAIN_FROM_RESOURCE, RequireScopes } from '../auth/scope-policy';
import { ApiError } from '../errors/api-error';
import { Idempotent } from '../http/edge-route';
import { UUID_PATTERN } from '../http/request-context';
import { listenPath, type StreamKind } from '../stream/stream-kinds';

export type QueryParams = Record<string, string | string[] | undefined>;

/** The answer to POST …/webhooks/stream and …/routes/stream (platform notes 1.12), by kind. */
export type StreamOpenedRecord<IdName extends string> = Record<IdName, string> & {
  /** Where to connect, with `api_secret_key` (and `force_reconnect=true` to replace a listener). */
  ws_url: string;
};

/** The query of a stream opening: only `names`, each at most once (400 otherwise). */
export function readStreamQuery<Name extends string>(
  query: QueryParams,
  names: readonly Name[],
): Partial<Record<Name, string>> {
  const read: Partial<Record<Name, string>> = {};
  for (const [name, value] of Object.entries(query)) {
    const known = names.find((candidate) => candidate === name);
    if (known === undefined) throw new ApiError(400, `unknown query parameter ${name}`);
    if (typeof value !== 'string') throw new ApiError(400, `${name} must be given once`);
    read[known] = value;
  }
  return read;
}

/** A uuid parameter, lowercased; absent stays absent. */
export function readUuidParameter(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!UUID_PATTERN.test(value)) throw new ApiError(400, `${name} must be a uuid`);
  return value.toLowerCase();
}

/** The gateway serves HTTPS only, so its WebSockets are wss://, on the host the client called. */
export function streamWsUrl(
  host: string,
  kind: StreamKind['name'],
  accountId: string,
  targetId: string,
): string {
  return `wss://${host}${listenPath(kind, accountId, targetId)}`;
}

/**
 * POST …/stream of a webhooks or routes controller: 200; `writeScope` of the target's domain; a
 * retry with the same Idempotency-Key answers the same (temporary) target.
 */
export function OpensStream(writeScope: string): MethodDecorator {
  return applyDecorators(
    Post('stream'),
    HttpCode(200),
    Idempotent(),
    RequireScopes([writeScope], { domainFrom: DOMAIN_FROM_RESOURCE }),
  );
}
