import { FirstAttempt } from '@envoi/shared-outbound';

import type {
  RouteCallOutcome,
  RouteCallRecord,
  RouteCallTarget,
} from './route-deliveries.repository';

/** A planned call made straight from the stream, before it is stored. */
export interface DirectRouteCall {
  id: string;
  routeId: string;
  route: RouteCallTarget;
  payload: string;
}

/** A call's result and when it was made. */
export interface EndedRouteCall {
  attemptedAt: Date;
  outcome: RouteCallOutcome;
}

/** The record of a call to the route `routeId` for the delivery `deliveryId`, once it ended. */
export function routeCallRecord(
  deliveryId: string,
  routeId: string,
  { outcome, attemptedAt }: EndedRouteCall,
): RouteCallRecord {
  return { ...outcome, deliveryId, routeId, attemptedAt };
}

/** The first attempt of a planned call (see FirstAttempt). */
export class DirectRouteAttempt extends FirstAttempt<EndedRouteCall> {
  constructor(readonly call: DirectRouteCall) {
    super();
  }
}
