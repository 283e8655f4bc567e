import type { MessageResponse, Page, StreamEvent } from '@envoi/contracts-core';
import { eventSubject, requestSubject, streamSubject } from '@envoi/contracts-core';

import type {
  AutomaticSuppressionResult,
  CheckSuppressionsResult,
  SuppressionCreatedData,
  SuppressionRecord,
  SuppressionsChangedEvent,
  SuppressionSnapshotResult,
} from './records';
import type {
  CheckSuppressionsRequest,
  CreateAutomaticSuppressionRequest,
  CreateSuppressionRequest,
  DeleteSuppressionRequest,
  ListSuppressionsRequest,
  SuppressionSnapshotRequest,
  WipeSuppressionsRequest,
} from './requests';

export const SuppressionsSubjects = {
  list: requestSubject<ListSuppressionsRequest, Page<SuppressionRecord>>(
    'suppressions.suppression.list.v1',
  ),
  /** `suppressions.already_exists` when an unexpired one has the same email and domain. */
  create: requestSubject<CreateSuppressionRequest, SuppressionRecord>(
    'suppressions.suppression.create.v1',
  ),
  /** `suppressions.not_found` when nothing matched. */
  delete: requestSubject<DeleteSuppressionRequest, MessageResponse>(
    'suppressions.suppression.delete.v1',
  ),
  wipe: requestSubject<WipeSuppressionsRequest, MessageResponse>(
    'suppressions.suppression.wipe.v1',
  ),

  /** Internal, at send time: the suppressed ones among up to 1000 recipients. */
  check: requestSubject<CheckSuppressionsRequest, CheckSuppressionsResult>(
    'suppressions.suppression.check.v1',
  ),
  /** Internal, for senders' caches: an account's unexpired suppressions (null when too many). */
  snapshot: requestSubject<SuppressionSnapshotRequest, SuppressionSnapshotResult>(
    'suppressions.suppression.snapshot.v1',
  ),
  /**
   * Broadcast to every replica (no queue group) once a change of an account's suppressions has
   * committed (created, automatic, deleted, wiped): senders drop their snapshot of it.
   */
  changed: eventSubject<SuppressionsChangedEvent>('suppressions.suppression.changed.v1'),
  /** Internal, for delivery: hard bounce or repeated failures → suppression (idempotent). */
  createAutomatic: requestSubject<CreateAutomaticSuppressionRequest, AutomaticSuppressionResult>(
    'suppressions.suppression.create-automatic.v1',
  ),
} as const;

export type SuppressionCreatedEvent = StreamEvent<'suppression.created', SuppressionCreatedData>;

/** Durable events on the EVENTS stream (JetStream), published through the outbox. */
export const SuppressionsStreamSubjects = {
  /** A suppression was added (through the API or automatically): once per suppression. */
  created: streamSubject<SuppressionCreatedEvent>('events.suppression.created.v1'),
} as const;
