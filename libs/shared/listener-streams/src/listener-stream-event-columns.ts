import { Column, CreateDateColumn, PrimaryColumn } from 'typeorm';

/**
 * The columns of a service's stream events table named `table` but its target column: the
 * entity extends this class and adds that column, its foreign key and the indexes (unique on
 * target and event id; target and seq; created_at). `seq` orders a target's events.
 */
export function listenerStreamEventColumns(table: string) {
  abstract class ListenerStreamEventColumns {
    @PrimaryColumn({
      type: 'bigint',
      generated: 'identity',
      generatedIdentity: 'ALWAYS',
      primaryKeyConstraintName: `${table}_pkey`,
    })
    seq!: string;

    /** The `webhook-id` a delivery of this event carries (its frame's metadata). */
    @Column({ type: 'varchar', length: 255 })
    eventId!: string;

    @Column({ type: 'varchar', length: 64 })
    eventType!: string;

    /** The payload, as the stream carries it. */
    @Column({ type: 'text' })
    body!: string;

    @CreateDateColumn({ type: 'timestamptz' })
    createdAt!: Date;
  }
  return ListenerStreamEventColumns;
}
