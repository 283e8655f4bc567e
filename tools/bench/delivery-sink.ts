// The SMTP sink every delivery case sends to, and the bookkeeping of what it received.
// The prompt sink of the test tier (no 100 ms greeting delay): a benchmark is a test harness too.
import { type SinkReceipt, SmtpSink } from '@envoi/shared-testing';

export { SmtpSink };

/** One message the sink accepted: its recipient and when (epoch ms), and its content if kept. */
export interface Arrival {
  recipient: string;
  receivedAt: number;
  mailFrom: string;
  secure: boolean;
  raw: Buffer | null;
}

/** The receipts whose recipient starts with a prefix, in arrival order. */
export class ReceiptCollector {
  readonly arrivals: Arrival[] = [];

  constructor(
    readonly prefix: string,
    readonly keepContent: boolean,
  ) {}

  get count(): number {
    return this.arrivals.length;
  }

  /** Arrivals by recipient (more than one: a duplicate). */
  byRecipient(): Map<string, Arrival[]> {
    const map = new Map<string, Arrival[]>();
    for (const arrival of this.arrivals) {
      map.set(arrival.recipient, [...(map.get(arrival.recipient) ?? []), arrival]);
    }
    return map;
  }
}

/**
 * Routes each receipt to the collector of its recipient's prefix as it arrives, and empties the
 * sink's own list (so a long run holds only what the collectors keep). Receipts no collector
 * claims are counted: there must be none.
 */
export class ReceiptRouter {
  private readonly collectors: ReceiptCollector[] = [];
  unclaimed = 0;
  firstUnclaimed: string | null = null;

  constructor(private readonly sink: SmtpSink) {
    sink.onReceipt(() => this.route());
  }

  /** Starts collecting the receipts of recipients starting with `prefix`. */
  collect(prefix: string, keepContent: boolean): ReceiptCollector {
    const collector = new ReceiptCollector(prefix, keepContent);
    this.collectors.push(collector);
    return collector;
  }

  private route(): void {
    for (const receipt of this.sink.receipts.splice(0)) this.routeOne(receipt);
  }

  private routeOne(receipt: SinkReceipt): void {
    for (const recipient of receipt.rcptTo) {
      const collector = this.collectors.find((candidate) => recipient.startsWith(candidate.prefix));
      if (!collector) {
        this.unclaimed++;
        this.firstUnclaimed ??= recipient;
        continue;
      }
      collector.arrivals.push({
        recipient,
        receivedAt: receipt.receivedAt,
        mailFrom: receipt.mailFrom,
        secure: receipt.secure,
        raw: collector.keepContent ? receipt.raw : null,
      });
    }
  }
}

/**
 * Polls until the collector holds `count` receipts. Gives up (throws) after `timeoutMs`, or when
 * nothing new arrived for `stallMs`, saying how far it got.
 */
export async function waitForArrivals(
  collector: ReceiptCollector,
  count: number,
  options: { timeoutMs: number; stallMs: number; signal: AbortSignal; what: string },
): Promise<void> {
  const started = performance.now();
  let lastCount = collector.count;
  let lastProgress = started;
  for (;;) {
    options.signal.throwIfAborted();
    const now = performance.now();
    if (collector.count >= count) return;
    if (collector.count !== lastCount) {
      lastCount = collector.count;
      lastProgress = now;
    }
    if (now - started > options.timeoutMs || now - lastProgress > options.stallMs) {
      const why =
        now - started > options.timeoutMs
          ? `within ${options.timeoutMs} ms`
          : `(nothing new for ${options.stallMs} ms)`;
      throw new Error(
        `${options.what}: ${collector.count} of ${count} messages reached the sink ${why}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
