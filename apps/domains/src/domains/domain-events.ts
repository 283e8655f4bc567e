import { type DomainChangeReason, DomainsSubjects } from '@envoi/contracts-domains';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

import type { DomainEntity } from './domain.entity';

/** Broadcasts for caches (at most once; caches also expire on their own). */
@Injectable()
export class DomainEvents {
  private readonly logger = new Logger(DomainEvents.name);

  constructor(private readonly rpc: RpcClient) {}

  changed(domain: DomainEntity, reason: DomainChangeReason): void {
    this.emit(() =>
      this.rpc.emit(DomainsSubjects.domainChanged, {
        domain_id: domain.id,
        account_id: domain.accountId,
        domain: domain.name,
        version: domain.version,
        reason,
      }),
    );
  }

  deleted(domain: DomainEntity, deletedAt: Date): void {
    this.emit(() =>
      this.rpc.emit(DomainsSubjects.domainDeleted, {
        domain_id: domain.id,
        account_id: domain.accountId,
        domain: domain.name,
        deleted_at: deletedAt.toISOString(),
      }),
    );
  }

  private emit(send: () => void): void {
    try {
      send();
    } catch (error) {
      this.logger.error(`could not broadcast a domain change: ${String(error)}`);
    }
  }
}
