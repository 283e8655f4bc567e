import { FirstAttempt } from '@envoi/shared-outbound';

import type { RouteCallOutcome, RouteCallTarget } from './route-deliveries.repository';

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

/** The first attempt of a planned call (see FirstAttempt). */
export class DirectRouteAttempt extends FirstAttempt<EndedRouteCall> {
  constructor(readonly call: DirectRouteCall) {
    super();
  }
}
