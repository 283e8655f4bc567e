import { randomUUID } from 'node:crypto';

import type { DeadLetter, DeadLetterStore, StoredDeadLetter } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Column, DataSource, Entity, Index, PrimaryColumn, type Repository } from 'typeorm';

/**
 * A stream message a consumer of the service gave up on (unprocessable, or failed on its last
 * delivery), kept for an operator to look at and replay (`npm run admin -- dead-letters`). In
 * the service's own schema: a service adds this entity to its DataSource and generates the table
 * in its migrations.
 */
@Entity({ name: 'dead_letters' })
@Index('dead_letters_failed_at_idx', ['failedAt'])
export class DeadLetterEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'dead_letters_pkey' })
  id!: string;

  @Column({ type: 'varchar', length: 255 })
  durable!: string;

  @Column({ type: 'varchar', length: 64 })
  stream!: string;

  @Column({ type: 'varchar', length: 255 })
  subject!: string;

  @Column({ type: 'bytea' })
  payload!: Buffer;

  @Column({ type: 'jsonb' })
  headers!: Record<string, string>;

  @Column({ type: 'text' })
  error!: string;

  @Column({ type: 'integer' })
  deliveries!: number;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  failedAt!: Date;
}

/** The service's dead letters, in its dead_letters table. */
@Injectable()
export class DeadLetterRepository implements DeadLetterStore {
  private readonly rows: Repository<DeadLetterEntity>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.rows = dataSource.getRepository(DeadLetterEntity);
  }

  async record(letter: DeadLetter): Promise<void> {
    await this.rows.insert({ ...letter, id: randomUUID(), payload: Buffer.from(letter.payload) });
  }

  async list(limit: number): Promise<StoredDeadLetter[]> {
    return this.rows.find({ order: { failedAt: 'DESC' }, take: limit });
  }

  async find(id: string): Promise<StoredDeadLetter | undefined> {
    return (await this.rows.findOneBy({ id })) ?? undefined;
  }

  async remove(id: string): Promise<void> {
    await this.rows.delete({ id });
  }
}
