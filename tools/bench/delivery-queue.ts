// Where a delivery job waits before its message is claimed: in the DELIVERY stream (not yet
// pulled by any replica) or held by a worker (pulled, not yet acknowledged: the views read, the
// wait for a message slot, the SMTP session and the recording). Sampled from the durable
// consumer's counters while a case runs; the mean times follow by Little's law (mean time =
// mean number waiting / rate).
import { DELIVERY_STREAM } from '@envoi/contracts-core';
import { connectNats } from '@envoi/shared-nats';
import type { ConsumerInfo, NatsConnection } from 'nats';

/** The durable consumer every delivery replica shares (apps/delivery DELIVERY_DURABLE). */
const DELIVERY_DURABLE = 'delivery-workers';

export interface WorkQueueFigures {
  samples: number;
  /** Jobs in the stream that no replica has pulled yet, on average. */
  meanJobsInStream: number;
  /** Jobs pulled and not yet acknowledged, on average. */
  meanJobsHeld: number;
  /** Jobs handed to a replica per second (redeliveries included). */
  jobsPulledPerSecond: number;
  /** Mean time a job waits in the stream before a replica pulls it. */
  inStreamMs: number;
  /** Mean time a job is held by a replica until it is acknowledged. */
  heldMs: number;
}

export interface Sample {
  at: number;
  inStream: number;
  held: number;
  pulled: number;
}

/** Samples the delivery consumer every `intervalMs` until stop(), for at most `maxMs`. */
export class WorkQueueSampler {
  private readonly samples: Sample[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly deadline: number;
  private pending: Promise<void> = Promise.resolve();

  private constructor(
    private readonly connection: NatsConnection,
    intervalMs: number,
    maxMs: number,
  ) {
    this.deadline = Date.now() + maxMs;
    this.timer = setInterval(() => this.sampleOnce(), intervalMs);
  }

  static async start(
    natsUrl: string,
    intervalMs: number,
    maxMs: number,
  ): Promise<WorkQueueSampler> {
    const connection = await connectNats({
      servers: natsUrl.split(','),
      name: 'envoi-bench-queue',
    });
    const sampler = new WorkQueueSampler(connection, intervalMs, maxMs);
    sampler.sampleOnce();
    return sampler;
  }

  async stop(): Promise<WorkQueueFigures | null> {
    clearInterval(this.timer);
    await this.pending;
    await this.connection.drain();
    return figuresOf(this.samples);
  }

  private sampleOnce(): void {
    if (Date.now() > this.deadline) {
      clearInterval(this.timer);
      return;
    }
    // One query at a time: a slow answer skips a tick rather than piling up.
    this.pending = this.pending.then(async () => {
      try {
        const jsm = await this.connection.jetstreamManager();
        this.samples.push(sampleOf(await jsm.consumers.info(DELIVERY_STREAM, DELIVERY_DURABLE)));
      } catch {
        // The consumer is not there (the delivery service restarting): no sample.
      }
    });
  }
}

function sampleOf(info: ConsumerInfo): Sample {
  return {
    at: Date.now(),
    inStream: info.num_pending,
    held: info.num_ack_pending,
    pulled: info.delivered.consumer_seq,
  };
}

/** Mean queue lengths, the pull rate and, by Little's law, the mean times (null: too few samples). */
export function figuresOf(samples: readonly Sample[]): WorkQueueFigures | null {
  const first = samples[0];
  const last = samples.at(-1);
  if (!first || !last || last.at <= first.at) return null;
  const mean = (pick: (sample: Sample) => number) =>
    samples.reduce((sum, sample) => sum + pick(sample), 0) / samples.length;
  const meanJobsInStream = mean((sample) => sample.inStream);
  const meanJobsHeld = mean((sample) => sample.held);
  const jobsPulledPerSecond = ((last.pulled - first.pulled) * 1000) / (last.at - first.at);
  const little = (waiting: number) =>
    jobsPulledPerSecond > 0 ? (waiting / jobsPulledPerSecond) * 1000 : NaN;
  return {
    samples: samples.length,
    meanJobsInStream,
    meanJobsHeld,
    jobsPulledPerSecond,
    inStreamMs: little(meanJobsInStream),
    heldMs: little(meanJobsHeld),
  };
}

/** The figures as breakdown lines. */
export function workQueueLines(figures: WorkQueueFigures | null): string[] {
  if (!figures) return [];
  const fixed = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '?');
  return [
    `delivery jobs (Little's law over ${figures.samples} samples, ${fixed(figures.jobsPulledPerSecond)} jobs/s pulled): ` +
      `${fixed(figures.meanJobsInStream)} waiting in the stream (mean ${fixed(figures.inStreamMs)} ms), ` +
      `${fixed(figures.meanJobsHeld)} held by workers (mean ${fixed(figures.heldMs)} ms: views, slot wait, SMTP, recording)`,
  ];
}
