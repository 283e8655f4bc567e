import { CodedError } from '@envoi/contracts-core';
import { SuppressionsErrorCode } from '@envoi/contracts-suppressions';
import { UnprocessableMessageError } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

import type { AutomaticSuppression, SuppressionDecision } from './delivery-outcome';
import { ProcessedEventsRepository } from './processed-events.repository';
import { SuppressionsService } from './suppressions.service';

/** What handling a delivery event did. */
export type AutomaticOutcome = 'ignored' | 'duplicate' | 'suppressed' | 'already_suppressed';

/**
 * Automatic suppressions from delivery events (see toSuppressionDecision for which), once per
 * event: an event already handled changes nothing, and an address an unexpired suppression
 * already covers neither gets a second suppression nor emits `suppression.created`
 * (createAutomatic). The event is marked handled after its suppressions are committed; should
 * the process die in between, the redelivery finds them and changes nothing either.
 */
@Injectable()
export class AutomaticSuppressionsService {
  private readonly logger = new Logger(AutomaticSuppressionsService.name);

  constructor(
    private readonly processedEvents: ProcessedEventsRepository,
    private readonly suppressions: SuppressionsService,
  ) {}

  /** `suppressed` when the event added at least one suppression. */
  async handle(decision: SuppressionDecision): Promise<AutomaticOutcome> {
    const { eventId, suppressions, unusable } = decision;
    if (unusable.length > 0) {
      this.logger.warn(
        `event ${eventId}: not email addresses, not suppressed: ${unusable.join(', ')}`,
      );
    }
    if (suppressions.length === 0) return 'ignored';
    if (await this.processedEvents.seen(eventId)) return 'duplicate';
    let anyCreated = false;
    for (const suppression of suppressions) {
      if (await this.suppress(eventId, suppression)) anyCreated = true;
    }
    await this.processedEvents.record(eventId);
    return anyCreated ? 'suppressed' : 'already_suppressed';
  }

  private async suppress(eventId: string, suppression: AutomaticSuppression): Promise<boolean> {
    let created: boolean;
    try {
      ({ created } = await this.suppressions.createAutomatic({
        account_id: suppression.accountId,
        email: suppression.email,
        domain: suppression.domain,
        reason: suppression.reason,
      }));
    } catch (error) {
      if (
        error instanceof CodedError &&
        (error.hasCode(SuppressionsErrorCode.InvalidEmail) ||
          error.hasCode(SuppressionsErrorCode.InvalidDomain))
      ) {
        throw new UnprocessableMessageError(`event ${eventId}: ${error.message}`);
      }
      throw error;
    }
    if (created) {
      this.logger.log(
        `suppressed ${suppression.email} for ${suppression.domain} (account ${suppression.accountId}): ${suppression.reason}`,
      );
    }
    return created;
  }
}
