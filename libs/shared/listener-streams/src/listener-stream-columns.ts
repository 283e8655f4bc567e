import { Column } from 'typeorm';

/**
 * The stream columns of a target entity (a webhook, a route) that ListenerStreamStore reads and
 * writes: an entity extends this class to have them.
 */
export abstract class ListenerStreamColumns {
  /** Created by POST …/stream without an existing target: no URL, never listed, purged when idle. */
  @Column({ type: 'boolean', default: false })
  temporary!: boolean;

  /** Its events are also buffered for a stream listener (POST …/stream). */
  @Column({ type: 'boolean', default: false })
  streamed!: boolean;

  /** The stream listener attached now (see streamLeaseUntil); null when none. */
  @Column({ type: 'uuid', nullable: true })
  streamSessionId!: string | null;

  /** The attachment holds until then unless the listener renews it. */
  @Column({ type: 'timestamptz', nullable: true })
  streamLeaseUntil!: Date | null;

  /** When the stream was last used (opened, attached, renewed, left): a temporary one idle long is purged. */
  @Column({ type: 'timestamptz', nullable: true })
  streamUsedAt!: Date | null;
}
