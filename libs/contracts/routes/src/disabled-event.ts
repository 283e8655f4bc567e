import type { StreamEvent } from '@envoi/contracts-core';
import { streamSubject } from '@envoi/contracts-core';
import { IsInt, IsOptional, IsString, IsUUID, Min } from 'class-validator';

/** A route the platform disabled on its own after too many failed calls in a row (notes 2.8). */
export class RouteDisabledData {
  @IsUUID() account_id!: string;
  @IsUUID() route_id!: string;
  @IsString() name!: string;
  @IsString() url!: string;
  /** Failed calls in a row when it was disabled (the one that disabled it included). */
  @IsInt() @Min(0) consecutive_failures!: number;
  /** The HTTP status of the last call; null when it got no response (refused, timed out). */
  @IsOptional() @IsInt() last_status!: number | null;
  @IsString() disabled_at!: string;
}

export type RouteDisabledEvent = StreamEvent<'route.disabled', RouteDisabledData>;

/** Durable events of the routes service on the EVENTS stream, published through its outbox. */
export const RoutesStreamSubjects = {
  /** Published in the statement that disables the route, so that its members are told. */
  routeDisabled: streamSubject<RouteDisabledEvent>('events.route.disabled.v1'),
} as const;
