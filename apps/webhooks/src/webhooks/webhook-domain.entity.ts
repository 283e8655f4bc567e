import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import { WebhookEntity } from './webhook.entity';

/** A domain a scoped webhook is linked to: it receives only that domain's events. */
@Entity({ name: 'webhook_domains' })
@Index('webhook_domains_account_id_domain_idx', ['accountId', 'domain'])
export class WebhookDomainEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'webhook_domains_pkey' })
  webhookId!: string;

  /** Normalised domain name (lowercase, no trailing dot). */
  @PrimaryColumn({ type: 'varchar', length: 253, primaryKeyConstraintName: 'webhook_domains_pkey' })
  domain!: string;

  /** Denormalised from the webhook, so that the fan-out finds an event's webhooks by index. */
  @Column({ type: 'uuid' })
  accountId!: string;

  @ManyToOne(() => WebhookEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'webhook_id', foreignKeyConstraintName: 'webhook_domains_webhook_id_fkey' })
  webhook?: WebhookEntity;
}
