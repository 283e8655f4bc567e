/**
 * The work a consumer holds, in the units its messages weigh (a job of n messages weighs n), and
 * how many more messages it may pull: it pulls only while what it holds is under `limit`. A pull
 * asks for as many messages as fit the room left, each counted as heavy as the heaviest of the
 * previous pull (one message at least), so that messages not yet pulled stay in the stream for
 * other replicas instead of waiting here, their ack wait running.
 */
export class HeldWeight {
  private held = 0;
  /** The heaviest message of the last pull that took any; the limit before the first. */
  private heaviest: number;
  private heaviestThisPull = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new Error('the held weight limit must be a positive integer');
    }
    this.heaviest = limit;
  }

  /** The weight held now. */
  get current(): number {
    return this.held;
  }

  /** Whether the consumer must wait for held work to finish before it pulls again. */
  get full(): boolean {
    return this.held >= this.limit;
  }

  /** Messages the next pull asks for at most. */
  pullSize(): number {
    return Math.max(1, Math.floor((this.limit - this.held) / this.heaviest));
  }

  /** A pulled message is now held. */
  take(weight: number): void {
    this.held += weight;
    this.heaviestThisPull = Math.max(this.heaviestThisPull, weight);
  }

  /** A pull ended: its heaviest message sizes the next one (unchanged when it took none). */
  pullEnded(): void {
    if (this.heaviestThisPull > 0) this.heaviest = this.heaviestThisPull;
    this.heaviestThisPull = 0;
  }

  /** Part (or all) of a held message's weight is done. */
  release(weight: number): void {
    this.held = Math.max(0, this.held - weight);
  }
}

/** A message's weight as held: what is left of it, released as its handler reports progress. */
export class HeldMessage {
  private left: number;

  constructor(
    private readonly weights: HeldWeight,
    weight: number,
  ) {
    this.left = weight;
    weights.take(weight);
  }

  /** `units` of the message are done (never more than what is left of it). */
  progress(units: number): void {
    const done = Math.min(Math.max(units, 0), this.left);
    this.left -= done;
    this.weights.release(done);
  }

  /** The message is settled: whatever is left of it is released. */
  settled(): void {
    this.progress(this.left);
  }
}
