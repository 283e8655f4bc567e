import {
  type AnyDeliveryJob,
  deliveryJobContract,
  deliveryJobMessageIds,
  MessagesStreamSubjects,
} from '@envoi/contracts-messages';
import {
  contractDecoder,
  StreamConsumer,
  StreamConsumers,
  type StreamDelivery,
  type StreamSettlement,
} from '@envoi/shared-nats';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';

import type { DeliveryConfig } from '../delivery.config';
import { SmtpPool } from '../smtp/smtp-pool';
import { DeliveryService } from './delivery.service';
import { fastDeliveryJob } from './job-fast-check';

/** The durable consumer every replica shares. */
export const DELIVERY_DURABLE = 'delivery-workers';

/** A job of either shape: checked by hand, or else validated with its contract class. */
export function decodeJob(payload: unknown): AnyDeliveryJob {
  return (
    fastDeliveryJob(payload) ??
    contractDecoder<AnyDeliveryJob>(deliveryJobContract(payload))(payload)
  );
}

/** The messages a job carries, read from its payload before it is validated (1 for one message). */
export function jobWeight(payload: unknown): number {
  const ids = (payload as { message_ids?: unknown } | null)?.message_ids;
  return Array.isArray(ids) ? Math.max(ids.length, 1) : 1;
}

/** After the grace period, how long aborted sessions get to hand their jobs back. */
const ABORT_SETTLE_MS = 5_000;

/**
 * The delivery workers of one replica: jobs of the DELIVERY work queue (a durable pull consumer
 * shared by every replica); a job is one message or a chunk of a send, and at most
 * DELIVERY_CONCURRENCY messages are in delivery at once across all of them (see
 * DeliveryService). It pulls another job only while it holds fewer than DELIVERY_CONCURRENCY +
 * DELIVERY_READ_AHEAD jobs, and fewer unfinished messages than that: the jobs read ahead read
 * their messages while the slots are sending. While a job runs its ack deadline is pushed back,
 * so a long SMTP session is never handed to a second worker; a worker that dies stops doing that
 * and its job goes to another after the ack wait. On shutdown the sessions in flight get
 * SHUTDOWN_GRACE_MS, then are aborted and hand their jobs back; finally the SMTP connections
 * close.
 */
@Injectable()
export class DeliveryWorker implements OnModuleDestroy {
  private readonly logger = new Logger(DeliveryWorker.name);

  constructor(
    private readonly consumers: StreamConsumers,
    private readonly delivery: DeliveryService,
    private readonly pool: SmtpPool,
  ) {}

  /** Resolves once the consumer exists (or the worker stopped before). */
  get ready(): Promise<void> {
    return this.consumers.ready();
  }

  /** Jobs being worked on now. */
  get busy(): number {
    return this.consumers.busy;
  }

  @StreamConsumer<AnyDeliveryJob, DeliveryConfig>({
    durables: { [DELIVERY_DURABLE]: MessagesStreamSubjects.deliveryJobs },
    decode: decodeJob,
    heartbeat: true,
    weigh: jobWeight,
    tuning: (config) => ({
      batch: config.DELIVERY_CONCURRENCY + config.DELIVERY_READ_AHEAD,
      // One-message jobs read ahead too: their reads (batched) run while the slots are sending.
      concurrency: config.DELIVERY_CONCURRENCY + config.DELIVERY_READ_AHEAD,
      maxHeldWeight: config.DELIVERY_CONCURRENCY + config.DELIVERY_READ_AHEAD,
      ackWaitMs: config.DELIVERY_ACK_WAIT_MS,
      retry: { firstDelayMs: 1_000, maxDelayMs: 60_000, maxDeliveries: -1 },
      stopGraceMs: config.SHUTDOWN_GRACE_MS,
      abortSettleMs: ABORT_SETTLE_MS,
    }),
  })
  async work(job: AnyDeliveryJob, delivery: StreamDelivery): Promise<StreamSettlement> {
    const settlement = await this.delivery.process(job, delivery.signal, () =>
      delivery.progress(1),
    );
    const ids = deliveryJobMessageIds(job);
    const what = `job #${delivery.streamSequence} ${ids[0] ?? ''}${ids.length > 1 ? ` (+${ids.length - 1})` : ''}#${job.attempt}`;
    switch (settlement.kind) {
      case 'ack':
        this.logger.log(`${what}: ${settlement.note}`);
        return { kind: 'ack' };
      case 'nak':
        this.logger.debug(`${what}: ${settlement.note}`);
        return { kind: 'nak', delayMs: settlement.delayMs };
      case 'term':
        return { kind: 'term', reason: `${what}: ${settlement.note}` };
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.consumers.stop();
    this.pool.close();
  }
}
