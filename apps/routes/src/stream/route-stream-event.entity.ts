import { listenerStreamEventColumns } from '@envoi/shared-listener-streams';
import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';

import { RouteEntity } from '../routes/route.entity';

const TABLE = 'route_stream_events';

/**
 * One `message.routing` event (without attachment bytes) buffered for a route's stream listener,
 * removed once written to it (or aged out).
 */
@Entity({ name: TABLE })
@Index(`${TABLE}_route_id_event_id_key`, ['routeId', 'eventId'], { unique: true })
@Index(`${TABLE}_route_id_seq_idx`, ['routeId', 'seq'])
@Index(`${TABLE}_created_at_idx`, ['createdAt'])
export class RouteStreamEventEntity extends listenerStreamEventColumns(TABLE) {
  @Column({ type: 'uuid' })
  routeId!: string;

  @ManyToOne(() => RouteEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'route_id', foreignKeyConstraintName: `${TABLE}_route_id_fkey` })
  route?: RouteEntity;
}
