interface RoutePlaces {
  /** Calls in flight from this replica, claimed and direct. */
  calls: number;
  /** Direct calls in flight or waiting for a place. */
  direct: number;
  /** Direct calls waiting for a place, in arrival order. */
  waiting: Array<() => void>;
}

/**
 * This replica's calls to each route, at most `perRoute` at once. A claimed call is already
 * within the route's limit over every replica (the claim counts leases): it takes a place at
 * once. A first attempt made straight from the stream waits for a place; a claim leaves the
 * places of those in flight (`directCalls`), so the two add up to about the limit at most (a
 * first attempt may start while a claim is being made).
 */
export class RouteCallPlaces {
  private readonly routes = new Map<string, RoutePlaces>();

  constructor(private readonly perRoute: number) {}

  /** Counts a claimed call in; `release` counts it out. */
  take(routeId: string): void {
    this.of(routeId).calls += 1;
  }

  /**
   * Runs `start` once the route has a free place (at once when it has one), the place counted
   * in until `release`. Answers a withdrawal: true when it took the attempt out before its turn
   * (`start` never runs), false when the attempt had started already.
   */
  waitFor(routeId: string, start: () => void): () => boolean {
    const route = this.of(routeId);
    route.direct += 1;
    let started = false;
    const begin = () => {
      started = true;
      route.calls += 1;
      start();
    };
    if (route.calls < this.perRoute) {
      begin();
      return () => false;
    }
    route.waiting.push(begin);
    return () => {
      if (started) return false;
      route.waiting = route.waiting.filter((waiting) => waiting !== begin);
      this.withdrawn(routeId, route);
      return true;
    };
  }

  /** A call ended: its place goes to the next waiting attempt. */
  release(routeId: string, direct: boolean): void {
    const route = this.routes.get(routeId);
    if (!route) return;
    route.calls -= 1;
    if (direct) route.direct -= 1;
    const next = route.calls < this.perRoute ? route.waiting.shift() : undefined;
    if (next) next();
    else this.forgetIdle(routeId, route);
  }

  /** The first attempts in flight on this replica, by route (a claim leaves their places). */
  directCalls(): { routeIds: string[]; counts: number[] } {
    const routeIds: string[] = [];
    const counts: number[] = [];
    for (const [routeId, route] of this.routes) {
      const running = route.direct - route.waiting.length;
      if (running <= 0) continue;
      routeIds.push(routeId);
      counts.push(running);
    }
    return { routeIds, counts };
  }

  private withdrawn(routeId: string, route: RoutePlaces): void {
    route.direct -= 1;
    this.forgetIdle(routeId, route);
  }

  private forgetIdle(routeId: string, route: RoutePlaces): void {
    if (route.calls === 0 && route.direct === 0) this.routes.delete(routeId);
  }

  private of(routeId: string): RoutePlaces {
    let route = this.routes.get(routeId);
    if (!route) {
      route = { calls: 0, direct: 0, waiting: [] };
      this.routes.set(routeId, route);
    }
    return route;
  }
}
