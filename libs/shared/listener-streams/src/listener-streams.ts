import type {
  AttachedListenerStreamRecord,
  ListenerStreamAckRecord,
  ListenerStreamEventsRecord,
  ListenerStreamSubjects,
} from '@envoi/contracts-core';
import type { RpcClient } from '@envoi/shared-nats';
import { Logger } from '@nestjs/common';

import type { ListenerStreamStore, NewStreamEvent } from './listener-stream-store';

/** What a service tells its listener streams: its coded errors, and who may listen. */
export interface ListenerStreamAccess {
  readonly errors: {
    notFound(): Error;
    listenerAttached(): Error;
    notAttached(): Error;
  };
  /**
   * Throws (not found, scope not granted) unless a domain-scoped key holding `granted` may
   * listen to the target.
   */
  requireGranted(accountId: string, targetId: string, granted: readonly string[]): Promise<void>;
}

/** What ListenerStreams uses of the service's ListenerStreamStore. */
export type ListenerStreamBuffer = Pick<
  ListenerStreamStore,
  'append' | 'attach' | 'read' | 'isAttached' | 'renew' | 'removeUpTo' | 'detach'
>;

/** What one service's listener streams are made of. */
export interface ListenerStreamsOptions {
  subjects: ListenerStreamSubjects;
  store: ListenerStreamBuffer;
  rpc: Pick<RpcClient, 'emit'>;
  /** Events kept per target; older ones are dropped when new ones are buffered. */
  bufferMax: number;
  access: ListenerStreamAccess;
}

/**
 * The listener streams of one service (platform notes 1.12): events buffered per target, one
 * listener attached at a time over every gateway, the buffer it reads and acknowledges. The
 * gateways learn of new events and of replaced listeners by core NATS broadcasts (at most once:
 * a listener also reads the buffer when it attaches and on every renewal).
 */
export class ListenerStreams {
  private readonly logger = new Logger(ListenerStreams.name);

  constructor(private readonly options: ListenerStreamsOptions) {}

  /** Buffers the events, then tells the gateways. */
  async append(events: readonly NewStreamEvent[]): Promise<void> {
    const targetIds = await this.options.store.append(events, this.options.bufferMax);
    if (targetIds.length === 0) return;
    this.announce('buffered stream events', () =>
      this.options.rpc.emit(this.options.subjects.appended, { target_ids: targetIds }),
    );
  }

  /** `granted`: a domain-scoped key listens only to targets all of whose domains it holds. */
  async attach(
    accountId: string,
    targetId: string,
    sessionId: string,
    force: boolean,
    leaseMs: number,
    granted: readonly string[] | undefined,
  ): Promise<AttachedListenerStreamRecord> {
    if (granted !== undefined)
      await this.options.access.requireGranted(accountId, targetId, granted);
    const result = await this.options.store.attach(accountId, targetId, sessionId, force, leaseMs);
    if (!result.attached) {
      throw result.reason === 'busy'
        ? this.options.access.errors.listenerAttached()
        : this.options.access.errors.notFound();
    }
    // The replaced listener also learns it on its next renewal.
    this.announce('the attached listener', () =>
      this.options.rpc.emit(this.options.subjects.attached, {
        target_id: targetId,
        session_id: sessionId,
      }),
    );
    return { replay_until_seq: result.replayUntilSeq };
  }

  async read(
    targetId: string,
    sessionId: string,
    afterSeq: number,
    limit: number,
  ): Promise<ListenerStreamEventsRecord> {
    if (!(await this.options.store.isAttached(targetId, sessionId)))
      throw this.options.access.errors.notAttached();
    const rows = await this.options.store.read(targetId, afterSeq, limit);
    return {
      data: rows.map((row) => ({
        seq: row.seq,
        event_id: row.eventId,
        event_type: row.eventType,
        body: row.body,
        created_at: row.createdAt.toISOString(),
      })),
    };
  }

  /** Renews the attachment, then drops what the listener was written up to `seq`. */
  async ack(
    targetId: string,
    sessionId: string,
    seq: number,
    leaseMs: number,
  ): Promise<ListenerStreamAckRecord> {
    if (!(await this.options.store.renew(targetId, sessionId, leaseMs))) return { attached: false };
    if (seq > 0) await this.options.store.removeUpTo(targetId, seq);
    return { attached: true };
  }

  async detach(targetId: string, sessionId: string): Promise<ListenerStreamAckRecord> {
    return { attached: !(await this.options.store.detach(targetId, sessionId)) };
  }

  private announce(what: string, emit: () => void): void {
    try {
      emit();
    } catch (error) {
      this.logger.warn(`could not announce ${what}: ${String(error)}`);
    }
  }
}
