import { DomainDeletedEvent, DomainsStreamSubjects } from '@envoi/contracts-domains';
import { eventDataDecoder, StreamConsumer } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

import { RouteMatchEvents } from '../matching/route-match-events';
import { RoutesRepository } from './routes.repository';

/** The durable consumer every replica of this service shares. */
export const DOMAIN_DELETED_DURABLE = 'routes-domain-deleted';

/**
 * Handles `events.domain.deleted`: the account's routes whose pattern names the domain go with it,
 * as a deleteRoute would remove them (their pending calls included). Routes for every domain stay.
 */
@Injectable()
export class DomainEventsController {
  private readonly logger = new Logger(DomainEventsController.name);

  constructor(
    private readonly routes: RoutesRepository,
    private readonly matchEvents: RouteMatchEvents,
  ) {}

  @StreamConsumer({
    durables: { [DOMAIN_DELETED_DURABLE]: DomainsStreamSubjects.deleted },
    decode: eventDataDecoder('domain.deleted', DomainDeletedEvent),
  })
  async removeDeletedDomain(deletion: DomainDeletedEvent): Promise<void> {
    const removed = await this.routes.deleteForDomain(deletion.account_id, deletion.domain_id);
    if (removed > 0) {
      this.matchEvents.changed([deletion.domain]);
      this.logger.log(`removed ${removed} route(s) of deleted domain ${deletion.domain}`);
    }
  }
}
