import { normalizeDomainName, validatePayload } from '@envoi/contracts-core';
import {
  type DomainDeletedData,
  DomainDeletedEvent,
  DomainsStreamSubjects,
} from '@envoi/contracts-domains';
import {
  DurableConsumerGroup,
  NATS_CONNECTION,
  UnprocessableMessageError,
} from '@envoi/shared-nats';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { NatsConnection } from 'nats';

import { AccountsConfig } from '../accounts.config';
import { DomainScopesService } from './domain-scopes.service';

/** The durable consumer every replica of this service shares. */
export const DOMAIN_DELETED_DURABLE = 'accounts-domain-deleted';

/** Redeliveries of a failed event back off up to this long. */

/**
 * The data of a `domain.deleted` stream event, validated against its contract; an event that can
 * never be handled (wrong type, bad fields) is unprocessable, not retried.
 */
export function toDomainDeletion(event: unknown): DomainDeletedData {
  const envelope = (typeof event === 'object' && event !== null ? event : {}) as {
    id?: unknown;
    type?: unknown;
    data?: unknown;
  };
  const what = `event ${String(envelope.id)}`;
  if (envelope.type !== 'domain.deleted') {
    throw new UnprocessableMessageError(`${what} is not domain.deleted: ${String(envelope.type)}`);
  }
  const data = validatePayload(DomainDeletedEvent, envelope.data);
  if (!data.ok) throw new UnprocessableMessageError(`${what}: ${data.message}`);
  if (Number.isNaN(Date.parse(data.value.deleted_at))) {
    throw new UnprocessableMessageError(`${what}: deleted_at is not a time`);
  }
  return {
    domain_id: data.value.domain_id,
    account_id: data.value.account_id,
    domain: normalizeDomainName(data.value.domain),
    deleted_at: data.value.deleted_at,
  };
}

/**
 * Handles `events.domain.deleted` from the EVENTS stream (the durable counterpart of an
 * @EventPattern handler): validates each event and has the key scopes naming the domain removed.
 * Starts once the app is up; stops, letting the event in hand finish, before the bus connection
 * and the database pool close.
 */
@Injectable()
export class DomainEventsController implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DomainEventsController.name);
  private consumer: DurableConsumerGroup | undefined;

  constructor(
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: AccountsConfig,
    private readonly domainScopes: DomainScopesService,
  ) {}

  onApplicationBootstrap(): void {
    this.consumer = DurableConsumerGroup.start<unknown>({
      connection: this.connection,
      durables: [[DOMAIN_DELETED_DURABLE, DomainsStreamSubjects.deleted]],
      settings: this.config,
      handle: async (event) => {
        await this.domainScopes.removeDeletedDomain(toDomainDeletion(event));
      },
      logger: this.logger,
    });
  }

  /** Resolves once the durable consumer exists (it waits for the stream to be created). */
  ready(): Promise<void> {
    return this.consumer?.ready() ?? Promise.resolve();
  }

  async onModuleDestroy(): Promise<void> {
    await this.consumer?.stop();
  }
}
