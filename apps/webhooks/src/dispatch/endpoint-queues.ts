import type { ClaimedDelivery } from './deliveries.repository';

export interface EndpointQueueLimits {
  /** Calls in flight to one endpoint at most (1 while its calls fail). */
  perEndpoint: number;
  /** Calls in flight in all at most. */
  calls: number;
}

interface Endpoint {
  waiting: Array<{ delivery: ClaimedDelivery; startBy: number }>;
  calls: number;
  /** Leases held: waiting, calling, or waiting for their attempt to be recorded. */
  leases: number;
  failing: boolean;
}

/**
 * The leased deliveries of one replica, by endpoint (webhook), and the calls it makes to them:
 * no more than the limits at once, endpoints served in turn, each one's deliveries in the order
 * they were leased. A delivery not started by its `startBy` time is dropped (its lease would run
 * out during the call: it is left to expire and be claimed again).
 */
export class EndpointQueues {
  private readonly endpoints = new Map<string, Endpoint>();
  private callCount = 0;
  private leaseCount = 0;

  constructor(private readonly limits: EndpointQueueLimits) {}

  /** Leases held in all. */
  leases(): number {
    return this.leaseCount;
  }

  /** Calls in flight in all. */
  calls(): number {
    return this.callCount;
  }

  /** The webhooks this replica holds leases of. */
  held(): string[] {
    return [...this.endpoints.keys()];
  }

  add(delivery: ClaimedDelivery, startBy: number): void {
    const endpoint = this.endpoints.get(delivery.webhookId) ?? {
      waiting: [],
      calls: 0,
      leases: 0,
      failing: false,
    };
    endpoint.waiting.push({ delivery, startBy });
    endpoint.leases += 1;
    endpoint.failing ||= delivery.webhookFailing;
    this.leaseCount += 1;
    this.endpoints.set(delivery.webhookId, endpoint);
  }

  /**
   * The deliveries to call now, each counted as a call until `callEnded`; and those dropped
   * because their start came too late (their leases are counted out already).
   */
  next(now: number): { start: ClaimedDelivery[]; dropped: ClaimedDelivery[] } {
    const start: ClaimedDelivery[] = [];
    const dropped: ClaimedDelivery[] = [];
    let progressed = true;
    while (progressed && this.callCount < this.limits.calls) {
      progressed = false;
      for (const [webhookId, endpoint] of [...this.endpoints]) {
        if (this.callCount >= this.limits.calls) break;
        const allowed = endpoint.failing ? 1 : this.limits.perEndpoint;
        if (endpoint.calls >= allowed) continue;
        const entry = endpoint.waiting.shift();
        if (!entry) continue;
        progressed = true;
        if (entry.startBy < now) {
          dropped.push(entry.delivery);
          this.settled(webhookId);
          continue;
        }
        endpoint.calls += 1;
        this.callCount += 1;
        start.push(entry.delivery);
        // Served: to the back of the turn.
        this.endpoints.delete(webhookId);
        this.endpoints.set(webhookId, endpoint);
      }
    }
    return { start, dropped };
  }

  /** A call ended: its endpoint fails (one call at a time) until a call succeeds. */
  callEnded(webhookId: string, succeeded: boolean): void {
    const endpoint = this.endpoints.get(webhookId);
    if (!endpoint) return;
    endpoint.calls -= 1;
    this.callCount -= 1;
    endpoint.failing = !succeeded;
  }

  /** A lease is given up: its attempt recorded, or the delivery dropped unsent. */
  settled(webhookId: string): void {
    const endpoint = this.endpoints.get(webhookId);
    if (!endpoint) return;
    endpoint.leases -= 1;
    this.leaseCount -= 1;
    if (endpoint.leases === 0) this.endpoints.delete(webhookId);
  }

  /** Takes the listed deliveries out while they still wait (their leases counted out). */
  withdraw(ids: ReadonlySet<string>): ClaimedDelivery[] {
    const withdrawn: ClaimedDelivery[] = [];
    for (const [webhookId, endpoint] of [...this.endpoints]) {
      const kept = endpoint.waiting.filter((entry) => !ids.has(entry.delivery.id));
      if (kept.length === endpoint.waiting.length) continue;
      const taken = endpoint.waiting.filter((entry) => ids.has(entry.delivery.id));
      endpoint.waiting = kept;
      for (const { delivery } of taken) {
        withdrawn.push(delivery);
        this.settled(webhookId);
      }
    }
    return withdrawn;
  }

  /** Takes every waiting delivery out (their leases counted out), for a replica that stops. */
  drain(): ClaimedDelivery[] {
    const drained: ClaimedDelivery[] = [];
    for (const [webhookId, endpoint] of [...this.endpoints]) {
      for (const { delivery } of endpoint.waiting.splice(0)) {
        drained.push(delivery);
        this.settled(webhookId);
      }
    }
    return drained;
  }
}
