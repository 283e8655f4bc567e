import { Injectable, Logger } from '@nestjs/common';

import { DeliveryConfig } from '../delivery.config';
import type { SessionGate } from '../smtp/smtp-sender';
import { AttemptWrites } from './attempt-writes';
import { type AttemptClaim, AttemptsRepository, type ClaimKey } from './attempts.repository';

/** Which attempt a claim is for, and when the attempt started. */
export type AttemptKey = ClaimKey;

/**
 * The attempt claims this replica holds, kept alive by one heartbeat: every third of
 * DELIVERY_CLAIM_TTL_MS, one statement extends them all. A claim the renewal no longer finds
 * (another worker took the attempt over) is reported lost to its holder. The heartbeat runs only
 * while claims are held.
 */
@Injectable()
export class ClaimKeeper {
  private readonly logger = new Logger(ClaimKeeper.name);
  private readonly held = new Map<string, { claim: AttemptClaim; onLost: () => void }>();
  private timer: NodeJS.Timeout | undefined;
  private renewing = false;

  constructor(
    private readonly attempts: AttemptsRepository,
    private readonly config: DeliveryConfig,
    /** Claims go in one statement with the other claims and outcomes of the moment. */
    private readonly writes: AttemptWrites,
  ) {}

  /** Claims held now. */
  get size(): number {
    return this.held.size;
  }

  /** A gate that claims the attempt when its first SMTP session opens. */
  gate(key: AttemptKey): AttemptGate {
    return new AttemptGate(this, key);
  }

  /** Claims the attempt and keeps the claim alive until letGo; null when another holds it. */
  async claim(key: AttemptKey, onLost: () => void): Promise<AttemptClaim | null> {
    const claim = await this.writes.claim(key);
    if (!claim) return null;
    this.held.set(claim.id, { claim, onLost });
    this.timer ??= this.startHeartbeat();
    return claim;
  }

  /** Stops renewing the claim (its outcome is recorded, or it was released). */
  letGo(claim: AttemptClaim): void {
    this.held.delete(claim.id);
    if (this.held.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** One heartbeat: extends every claim held; tells the holders of those that were lost. */
  async renew(): Promise<void> {
    if (this.renewing || this.held.size === 0) return;
    this.renewing = true;
    const entries = [...this.held.values()];
    try {
      const renewed = await this.attempts.renew(
        entries.map((entry) => entry.claim),
        this.leaseEnd(),
      );
      for (const entry of entries) {
        if (renewed.has(entry.claim.id) || !this.held.has(entry.claim.id)) continue;
        this.held.delete(entry.claim.id);
        entry.onLost();
      }
    } catch (error) {
      // The next beat tries again; meanwhile the claims may run out and be taken over.
      this.logger.warn(`could not renew ${entries.length} attempt claim(s): ${String(error)}`);
    } finally {
      this.renewing = false;
    }
  }

  private leaseEnd(): Date {
    return new Date(Date.now() + this.config.DELIVERY_CLAIM_TTL_MS);
  }

  private startHeartbeat(): NodeJS.Timeout {
    const timer = setInterval(
      () => void this.renew(),
      Math.floor(this.config.DELIVERY_CLAIM_TTL_MS / 3),
    );
    timer.unref();
    return timer;
  }
}

/**
 * One attempt's claim, taken when its first SMTP session has a connection (an attempt still
 * waiting for one holds nothing, and a dead worker's such attempts run again at once elsewhere).
 * Once the claim is refused or lost, sessions that have not sent their data yet stop.
 */
export class AttemptGate implements SessionGate {
  private readonly stop = new AbortController();
  private held: AttemptClaim | null = null;
  /** Why the sessions were stopped: another worker held the attempt, or took it over. */
  private stoppedBy: 'refused' | 'lost' | null = null;

  constructor(
    private readonly keeper: ClaimKeeper,
    private readonly key: AttemptKey,
  ) {}

  get beforeData(): AbortSignal {
    return this.stop.signal;
  }

  get startedAt(): Date {
    return this.key.startedAt;
  }

  /** The claim, once a session opened. */
  get claim(): AttemptClaim | null {
    return this.held;
  }

  get stopped(): 'refused' | 'lost' | null {
    return this.stoppedBy;
  }

  async open(): Promise<boolean> {
    if (this.stoppedBy) return false;
    if (this.held) return true;
    this.held = await this.keeper.claim(this.key, () => this.end('lost'));
    if (!this.held) this.end('refused');
    return this.held !== null;
  }

  /** Stops keeping the claim alive. */
  letGo(): void {
    if (this.held) this.keeper.letGo(this.held);
  }

  private end(reason: 'refused' | 'lost'): void {
    this.stoppedBy ??= reason;
    this.stop.abort();
  }
}
