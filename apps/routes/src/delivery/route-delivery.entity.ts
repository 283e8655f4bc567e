import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
} from 'typeorm';

import { RouteEntity } from '../routes/route.entity';
import { InboundMessageEntity } from './inbound-message.entity';

/** pending: to call (again); delivered: a 2xx came; given_up: retries spent or route gone/disabled. */
export type RouteDeliveryState = 'pending' | 'delivered' | 'given_up';

/** One POST to make to a route: a message for one recipient, or for all (group_by_message_id). */
@Entity({ name: 'route_deliveries' })
@Index('route_deliveries_due_idx', ['nextAttemptAt'], { where: `state = 'pending'` })
@Index('route_deliveries_inbound_id_idx', ['inboundId'])
@Index('route_deliveries_route_id_idx', ['routeId'])
export class RouteDeliveryEntity {
  /** Also the `webhook-id` of every call, the same on retries. */
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'route_deliveries_pkey' })
  id!: string;

  @Column({ type: 'uuid' })
  routeId!: string;

  @ManyToOne(() => RouteEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'route_id', foreignKeyConstraintName: 'route_deliveries_route_id_fkey' })
  route?: RouteEntity;

  @Column({ type: 'uuid' })
  inboundId!: string;

  @ManyToOne(() => InboundMessageEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'inbound_id',
    foreignKeyConstraintName: 'route_deliveries_inbound_id_fkey',
  })
  inbound?: InboundMessageEntity;

  /** The envelope recipients this call is for (one unless grouped). */
  @Column({ type: 'text', array: true })
  recipients!: string[];

  /** The message.routing body every call sends (built at intake); null for calls planned before. */
  @Column({ type: 'text', nullable: true })
  payload!: string | null;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  state!: RouteDeliveryState;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ type: 'timestamptz' })
  nextAttemptAt!: Date;

  /** Claimed by a replica until then; null when not claimed. */
  @Column({ type: 'timestamptz', nullable: true })
  leaseUntil!: Date | null;

  @Column({ type: 'integer', nullable: true })
  lastStatus!: number | null;

  @Column({ type: 'text', nullable: true })
  lastError!: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt!: Date;
}
