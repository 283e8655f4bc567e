import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { RetentionRepository } from '../retention/retention.repository';
import { type ApplyResult, type BatchMessage, byId, claimsOf, foldBatch } from './batch-fold';
import type { DeliveryOutcome } from './delivery-outcome';
import { DeliveryStatesRepository } from './delivery-states.repository';
import { applyOutcome, deliveryFinished, type DeliveryState } from './status-machine';

export type { ApplyResult } from './batch-fold';

/**
 * The status machine's writes: applies delivery events to their messages, each at most once and
 * never moving a status backwards (see status-machine.ts).
 */
@Injectable()
export class DeliveryEventsService {
  private readonly logger = new Logger(DeliveryEventsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly states: DeliveryStatesRepository,
    private readonly retention: RetentionRepository,
  ) {}

  /**
   * One transaction: locks the message (events of one message apply one after the other, whatever
   * consumer or replica handles them), claims the event id (a duplicate changes nothing), applies
   * the outcome, and purges the content of a message kept with data retention 0 once its
   * delivery is over. An event of a message that no longer exists (metadata retention) or of
   * another account is dropped.
   */
  async apply(outcome: DeliveryOutcome): Promise<ApplyResult> {
    const result = await this.dataSource.transaction((manager) => this.applyIn(manager, outcome));
    this.warnIfUnknown(outcome, result);
    return result;
  }

  /**
   * Applies several events with the same result as apply() one by one in their order: without
   * locks when none of the messages it changes is written meanwhile (applyUnlocked), otherwise in
   * one transaction that locks them (applyLocked). Answers each event's result, in order.
   */
  async applyBatch(outcomes: readonly DeliveryOutcome[]): Promise<ApplyResult[]> {
    const results = (await this.applyUnlocked(outcomes)) ?? (await this.applyLocked(outcomes));
    outcomes.forEach((outcome, index) => this.warnIfUnknown(outcome, results[index]));
    return results;
  }

  /**
   * Two statements, no transaction: reads the messages and which events were applied before,
   * folds the new events through the status machine in order, then claims them and writes every
   * changed message in one statement, which does nothing unless every one of those messages is as
   * read. Undefined (nothing written) when one was written meanwhile, or when a message kept with
   * data retention 0 ends its delivery (its purge takes the locking transaction).
   */
  private async applyUnlocked(
    outcomes: readonly DeliveryOutcome[],
  ): Promise<ApplyResult[] | undefined> {
    const read = await this.states.readBatch(outcomes);
    const messages = byId(read.messages);
    const claims = claimsOf(messages, outcomes).filter(
      ({ eventId }) => !read.processed.has(eventId),
    );
    const folded = foldBatch(messages, outcomes, new Set(claims.map(({ eventId }) => eventId)));
    const changed = [...folded.changed.values()];
    if (changed.length === 0) return folded.results;
    if (changed.some(({ message, state }) => purgesContent(message, state))) return undefined;
    const written = await this.states.writeIfUnchanged(
      changed.map(({ message, state }) => ({ id: message.id, state })),
      read.versions,
      claims,
      new Date(),
    );
    return written ? folded.results : undefined;
  }

  /**
   * One transaction: locks the messages (in id order) and claims the events not applied before
   * (one statement), folds each message's new events through the status machine in order, writes
   * every changed message in one statement and purges the content of those kept with data
   * retention 0 whose delivery is over. Fails as a whole (nothing written).
   */
  private applyLocked(outcomes: readonly DeliveryOutcome[]): Promise<ApplyResult[]> {
    return this.dataSource.transaction(async (manager) => {
      const locked = await this.states.lockAndClaim(outcomes, manager);
      const folded = foldBatch(byId(locked.messages), outcomes, locked.claimed);
      const changed = [...folded.changed.values()];
      await this.states.writeStates(
        changed.map(({ message, state }) => ({ id: message.id, state })),
        new Date(),
        manager,
      );
      await this.retention.purgeContentsNow(
        changed
          .filter(({ message, state }) => purgesContent(message, state))
          .map(({ message }) => message.id),
        manager,
      );
      return folded.results;
    });
  }

  private warnIfUnknown(outcome: DeliveryOutcome, result: ApplyResult | undefined): void {
    if (result !== 'unknown_message') return;
    this.logger.warn(
      `event ${outcome.eventId} (${outcome.type}) names message ${outcome.messageId} of account ${outcome.accountId}, which does not exist; ignored`,
    );
  }

  private async applyIn(manager: EntityManager, outcome: DeliveryOutcome): Promise<ApplyResult> {
    const message = await this.states.lockOne(outcome.messageId, outcome.accountId, manager);
    if (!message) return 'unknown_message';
    const claimed = await this.states.claimEvents(
      [{ eventId: outcome.eventId, messageId: message.id, type: outcome.type }],
      manager,
    );
    if (claimed.size === 0) return 'duplicate';
    const next = applyOutcome(message, outcome.reported);
    await this.states.writeState(message.id, next, new Date(), manager);
    if (purgesContent(message, next)) {
      await this.retention.purgeContentNow(message.id, manager);
    }
    return 'applied';
  }
}

/** Whether a message's content goes now: kept with data retention 0, its delivery is over. */
function purgesContent(
  message: Pick<BatchMessage, 'retentionDataDays'>,
  state: DeliveryState,
): boolean {
  return message.retentionDataDays === 0 && deliveryFinished(state.status);
}
