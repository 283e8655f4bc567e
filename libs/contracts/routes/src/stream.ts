import { listenerStreamSubjects, requestSubject } from '@envoi/contracts-core';
import { IsArray, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';

import { ROUTE_RECIPIENT_MAX } from './requests';

/**
 * The route stream of platform notes 1.12 (what `routes listen` uses): the `message.routing`
 * events of a route on a listener stream (contracts-core listener-streams) whose target is the
 * route. Attachment bytes are never streamed: an event lists each attachment's metadata only.
 */

/**
 * POST …/routes/stream: exactly one of `route_id` (an existing route, which keeps its POSTs) and
 * `recipient` (a pattern naming a domain of the account: a temporary route without a URL).
 */
export class OpenRouteStreamRequest {
  @IsUUID() account_id!: string;
  @IsOptional() @IsUUID() route_id?: string;
  @IsOptional() @IsString() @MaxLength(ROUTE_RECIPIENT_MAX) recipient?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) domains?: string[];
}

/** The answer to POST …/routes/stream, before the gateway adds `ws_url`. */
export interface OpenedRouteStreamRecord {
  route_id: string;
}

export const RouteStreamSubjects = {
  open: requestSubject<OpenRouteStreamRequest, OpenedRouteStreamRecord>('routes.stream.open.v1'),
  ...listenerStreamSubjects('routes'),
} as const;
