import { randomUUID } from 'node:crypto';

import {
  type SuppressionCreatedEvent,
  SuppressionsStreamSubjects,
} from '@envoi/contracts-suppressions';
import type { StreamItem } from '@envoi/shared-nats';
import { runInTraceContext } from '@envoi/shared-observability';
import { enqueueOutbox, outboxBatchEntry, OutboxRelayService } from '@envoi/shared-outbox';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { SuppressionsConfig } from '../suppressions.config';
import {
  type AutomaticOutcome,
  batchOutcomes,
  inboxClaims,
  wantedSuppressions,
} from './automatic-batch';
import type { SuppressionDecision } from './delivery-outcome';
import { ProcessedEventsRepository } from './processed-events.repository';
import type { SuppressionEntity } from './suppression.entity';
import { toCreatedEventData } from './suppression.mapper';
import { SuppressionChangeEvents } from './suppression-change-events';
import { SuppressionsRepository } from './suppressions.repository';

export type { AutomaticOutcome } from './automatic-batch';

/** A suppression a batch inserted, with the position of the event that asked for it. */
interface CreatedSuppression {
  suppression: SuppressionEntity;
  itemIndex: number;
}

/**
 * Automatic suppressions from delivery events (see toSuppressionDecision for which), once per
 * event: an event already handled changes nothing, and an address an unexpired suppression
 * already covers neither gets a second suppression nor emits `suppression.created`. The events
 * that ask for nothing (most deliveries and deferrals) touch no table.
 */
@Injectable()
export class AutomaticSuppressionsService {
  private readonly logger = new Logger(AutomaticSuppressionsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: SuppressionsConfig,
    private readonly outbox: OutboxRelayService,
    private readonly processedEvents: ProcessedEventsRepository,
    private readonly suppressions: SuppressionsRepository,
    private readonly changes: SuppressionChangeEvents,
  ) {}

  /**
   * Handles the events of a batch with the result of handling them one by one in their order, in
   * one transaction of four statements at most: claims the events that ask for a suppression in
   * the inbox, deletes the expired rows with their keys, inserts the suppressions not covered yet
   * and their `suppression.created` events (one outbox row). Answers each event's outcome, in
   * order. Fails as a whole (nothing written).
   */
  async handle(items: ReadonlyArray<StreamItem<SuppressionDecision>>): Promise<AutomaticOutcome[]> {
    const decisions = items.map(({ event }) => event);
    items.forEach((item) => this.warnIfUnusable(item));
    const claims = inboxClaims(decisions);
    if (claims.length === 0) return decisions.map(() => 'ignored');
    const { claimed, created } = await this.dataSource.transaction((manager) =>
      this.suppressIn(manager, decisions, claims),
    );
    if (created.length > 0) {
      this.outbox.notify();
      await this.changes.changed(created.map(({ suppression }) => suppression.accountId));
    }
    for (const { suppression, itemIndex } of created) {
      const item = items[itemIndex];
      if (item) this.logCreated(item, suppression);
    }
    return batchOutcomes(decisions, claimed, new Set(created.map(({ itemIndex }) => itemIndex)));
  }

  /** The batch's statements, in the caller's transaction (see handle). */
  private async suppressIn(
    manager: EntityManager,
    decisions: readonly SuppressionDecision[],
    claims: readonly string[],
  ): Promise<{ claimed: Set<string>; created: CreatedSuppression[] }> {
    const claimed = await this.processedEvents.claim(claims, manager);
    const wanted = wantedSuppressions(decisions, claimed);
    const now = new Date();
    const inserted = await this.suppressions.insertAutomatic(
      wanted.map(({ suppression }) => suppression),
      now,
      new Date(now.getTime() + this.config.SUPPRESSION_AUTOMATIC_TTL_MS),
      manager,
    );
    const created = wanted.flatMap(({ itemIndex }, index) => {
      const suppression = inserted[index];
      return suppression ? [{ suppression, itemIndex }] : [];
    });
    if (created.length > 0) {
      const events = created.map(({ suppression }) => createdEvent(suppression));
      await enqueueOutbox(manager, [
        outboxBatchEntry(SuppressionsStreamSubjects.created, randomUUID(), events),
      ]);
    }
    return { claimed, created };
  }

  private warnIfUnusable({ event, delivery }: StreamItem<SuppressionDecision>): void {
    if (event.unusable.length === 0) return;
    runInTraceContext(delivery.trace, () =>
      this.logger.warn(
        `event ${event.eventId}: not email addresses, not suppressed: ${event.unusable.join(', ')}`,
      ),
    );
  }

  private logCreated(
    { delivery }: StreamItem<SuppressionDecision>,
    suppression: SuppressionEntity,
  ): void {
    runInTraceContext(delivery.trace, () =>
      this.logger.log(
        `suppressed ${suppression.email} for ${suppression.domain} (account ${suppression.accountId}): ${suppression.reason}`,
      ),
    );
  }
}

function createdEvent(suppression: SuppressionEntity): SuppressionCreatedEvent {
  return {
    id: randomUUID(),
    type: 'suppression.created',
    timestamp: suppression.createdAt.toISOString(),
    data: toCreatedEventData(suppression),
  };
}
