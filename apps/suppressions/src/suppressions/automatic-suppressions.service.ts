import { CodedError } from '@envoi/contracts-core';
import { SuppressionsErrorCode } from '@envoi/contracts-suppressions';
import { UnprocessableMessageError } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import type { SuppressionDecision } from './delivery-outcome';
import { SuppressionsService } from './suppressions.service';

const IS_PROCESSED_SQL = `SELECT 1 FROM suppressions.processed_events WHERE event_id = $1`;

const MARK_PROCESSED_SQL = `
  INSERT INTO suppressions.processed_events (event_id) VALUES ($1)
  ON CONFLICT (event_id) DO NOTHING`;

/** What handling a delivery event did. */
export type AutomaticOutcome = 'ignored' | 'duplicate' | 'suppressed' | 'already_suppressed';

/**
 * Automatic suppressions from delivery events (see toSuppressionDecision for which), once per
 * event: an event already handled changes nothing, and one whose address an unexpired
 * suppression already covers neither adds a suppression nor emits `suppression.created`
 * (createAutomatic). The event is marked handled after its suppression is committed; should the
 * process die in between, the redelivery finds the suppression and changes nothing either.
 */
@Injectable()
export class AutomaticSuppressionsService {
  private readonly logger = new Logger(AutomaticSuppressionsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly suppressions: SuppressionsService,
  ) {}

  async handle(decision: SuppressionDecision): Promise<AutomaticOutcome> {
    const { eventId, suppression } = decision;
    if (!suppression) return 'ignored';
    const seen = await this.dataSource.query<unknown[]>(IS_PROCESSED_SQL, [eventId]);
    if (seen.length > 0) return 'duplicate';
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
    await this.dataSource.query(MARK_PROCESSED_SQL, [eventId]);
    if (created) {
      this.logger.log(
        `suppressed ${suppression.email} for ${suppression.domain} (account ${suppression.accountId}): ${suppression.reason}`,
      );
    }
    return created ? 'suppressed' : 'already_suppressed';
  }
}
