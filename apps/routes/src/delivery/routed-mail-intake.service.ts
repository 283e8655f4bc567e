import type { RoutedMailData } from '@envoi/contracts-routes';
import { preparedQuery } from '@envoi/shared-database';
import {
  NATS_CONNECTION,
  readUpload,
  UnprocessableMessageError,
  UploadUnavailableError,
} from '@envoi/shared-nats';
import { endedWithin } from '@envoi/shared-outbound';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { NatsConnection } from 'nats';
import { DataSource, type EntityManager, In } from 'typeorm';

import { RouteMatchEvents } from '../matching/route-match-events';
import { RoutesConfig } from '../routes.config';
import { RouteStreamFeed, type StreamableRoute } from '../stream/route-stream-feed';
import { planDeliveries, routeCallId } from './delivery-plan';
import { type DirectRouteAttempt, routeCallRecord } from './direct-route-attempt';
import { InboundMessageEntity } from './inbound-message.entity';
import {
  countFirstAttempts,
  type RouteCallTarget,
  stateAfter,
} from './route-deliveries.repository';
import type { RouteDeliveryState } from './route-delivery.entity';
import { RouteDeliveryWorker } from './route-delivery-worker.service';
import { routingPayloadOf } from './routing-payload';
import { parsedMail, type TakenMail } from './taken-mail';

/**
 * A planned call's row: its body, or given up at once when its message is refused; with its
 * first attempt when that was made before the row was stored (then leased when the call was
 * still running).
 */
interface PlannedCallRow {
  id: string;
  routeId: string;
  inboundId: string;
  recipients: string[];
  nextAttemptAt: Date;
  payload: string | null;
  state: RouteDeliveryState;
  lastError: string | null;
  attempts: number;
  leaseUntil: Date | null;
  lastStatus: number | null;
}

/** What the intake reads of a route. */
type IntakeRoute = StreamableRoute &
  RouteCallTarget & {
    temporary: boolean;
    /** Its calls fail (failures since its last success): its mail goes through the database. */
    failing: boolean;
  };

const ENABLED_ROUTES_SQL = `
  SELECT id, account_id, group_by_message_id, attachments, headers, strip_replies, streamed,
    temporary, url, secret_ciphertext, errors_since_last_success
  FROM routes.routes WHERE id = ANY($1::uuid[]) AND enabled`;

interface IntakeRouteRow {
  id: string;
  account_id: string;
  group_by_message_id: boolean;
  attachments: boolean;
  headers: boolean;
  strip_replies: boolean;
  streamed: boolean;
  temporary: boolean;
  url: string;
  secret_ciphertext: string;
  errors_since_last_success: number;
}

function intakeRouteOf(row: IntakeRouteRow): IntakeRoute {
  return {
    id: row.id,
    accountId: row.account_id,
    groupByMessageId: row.group_by_message_id,
    attachments: row.attachments,
    headers: row.headers,
    stripReplies: row.strip_replies,
    streamed: row.streamed,
    temporary: row.temporary,
    url: row.url,
    secretCiphertext: row.secret_ciphertext,
    failing: row.errors_since_last_success > 0,
  };
}

const INSERT_MESSAGES_SQL = `
  INSERT INTO routes.inbound_messages (id, account_id, received_at, raw)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::bytea[])
  ON CONFLICT (id) DO NOTHING
  RETURNING id`;

/** The calls planned, each call's recipients as a JSON array (unnest flattens a text[][]). */
const INSERT_CALLS_SQL = `
  INSERT INTO routes.route_deliveries
    (id, route_id, inbound_id, recipients, next_attempt_at, payload, state, last_error, attempts,
      lease_until, last_status)
  SELECT u.id, u.route_id, u.inbound_id, ARRAY(SELECT jsonb_array_elements_text(u.recipients)),
    u.next_attempt_at, u.payload, u.state, u.last_error, u.attempts, u.lease_until, u.last_status
  FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::jsonb[], $5::timestamptz[], $6::text[],
    $7::varchar[], $8::text[], $9::int[], $10::timestamptz[], $11::int[])
    AS u(id, route_id, inbound_id, recipients, next_attempt_at, payload, state, last_error,
      attempts, lease_until, last_status)`;

/** The calls of a message to the routes of its account (enabled ones), with their bodies. */
function plannedCalls(
  { mail, raw, parsed }: TakenMail,
  routes: readonly IntakeRoute[],
  now: Date,
): PlannedCallRow[] {
  const own = routes.filter((route) => route.accountId === mail.account_id);
  return planDeliveries(mail.recipients, own).map((planned) => {
    const row = {
      id: routeCallId(mail.inbound_id, planned.route.id, planned.recipients),
      routeId: planned.route.id,
      inboundId: mail.inbound_id,
      recipients: planned.recipients,
      nextAttemptAt: now,
      attempts: 0,
      leaseUntil: null,
      lastStatus: null,
    };
    if ('refused' in parsed) {
      const { reason, message } = parsed.refused;
      return {
        ...row,
        payload: null,
        state: 'given_up',
        lastError: `message refused (${reason}): ${message}`,
      };
    }
    const call = { inboundId: mail.inbound_id, raw, recipients: planned.recipients };
    const payload = JSON.stringify(routingPayloadOf(parsed.message, call, planned.route, now));
    return { ...row, payload, state: 'pending', lastError: null };
  });
}

function insertCalls(manager: EntityManager, calls: readonly PlannedCallRow[]): Promise<unknown> {
  return preparedQuery(manager, INSERT_CALLS_SQL, [
    calls.map((call) => call.id),
    calls.map((call) => call.routeId),
    calls.map((call) => call.inboundId),
    calls.map((call) => JSON.stringify(call.recipients)),
    calls.map((call) => call.nextAttemptAt),
    calls.map((call) => call.payload),
    calls.map((call) => call.state),
    calls.map((call) => call.lastError),
    calls.map((call) => call.attempts),
    calls.map((call) => call.leaseUntil),
    calls.map((call) => call.lastStatus),
  ]);
}

/** A planned call as stored after its first attempt: `ended`, or still running (leased). */
function attempted(
  row: PlannedCallRow,
  attempt: DirectRouteAttempt,
  leaseUntil: Date,
): PlannedCallRow {
  const ended = attempt.outcome;
  if (ended === null) return row;
  if (ended === undefined) return { ...row, attempts: 1, leaseUntil };
  const { outcome } = ended;
  return {
    ...row,
    attempts: 1,
    state: stateAfter(outcome),
    nextAttemptAt: outcome.nextAttemptAt ?? row.nextAttemptAt,
    lastStatus: outcome.status,
    lastError: outcome.error,
  };
}

/**
 * Takes a routed message from the MX: copies its bytes (carried by its event, or from its spool,
 * which expires), parses it once and plans its calls with their bodies, in one transaction, once
 * per inbound id (a redelivered event changes nothing). The stream event is acknowledged only after this commits: accepted
 * mail is never lost. A message the inbound-mail library refuses (a MIME bomb) has its calls
 * given up with the reason; its bytes stay for inspection until the retention purge.
 */
@Injectable()
export class RoutedMailIntake {
  private readonly logger = new Logger(RoutedMailIntake.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly worker: RouteDeliveryWorker,
    private readonly matchEvents: RouteMatchEvents,
    private readonly streams: RouteStreamFeed,
    private readonly config: RoutesConfig,
  ) {}

  async accept(mail: RoutedMailData): Promise<void> {
    await this.acceptAll([mail], { firstDelivery: false });
  }

  /**
   * Takes the routed messages of a batch of events together: their spools read at once, each
   * message parsed once and its calls planned with their bodies. Events the stream delivers for
   * the first time (`firstDelivery`) have their calls made at once, for routes whose calls do
   * not fail, within the routes' places on this replica (ROUTE_DIRECT_WAIT_MS at most; 0: none).
   * Then one transaction stores the messages, their calls (with the results of those made, and
   * leased while a call still runs) and the routes' counters. Events repeating an inbound id (of
   * this batch or taken before) store nothing more; a call made for one was made again with the
   * same id (at least once).
   */
  async acceptAll(
    mails: readonly RoutedMailData[],
    { firstDelivery }: { firstDelivery: boolean },
  ): Promise<void> {
    const unique = [...new Map(mails.map((mail) => [mail.inbound_id, mail])).values()];
    const bytes = await Promise.all(unique.map((mail) => this.bytesOf(mail)));
    const taken: TakenMail[] = [];
    for (const [index, mail] of unique.entries()) {
      const raw = bytes[index];
      if (!raw) continue;
      taken.push({ mail, raw, parsed: await parsedMail(raw) });
      // Calls in flight get their responses handled between two parses of a large batch.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (taken.length === 0) return;
    const routeIds = [
      ...new Set(
        taken.flatMap(({ mail }) => mail.recipients.flatMap((recipient) => recipient.route_ids)),
      ),
    ];
    const routes = (
      await preparedQuery<IntakeRouteRow>(this.dataSource.manager, ENABLED_ROUTES_SQL, [routeIds])
    ).map(intakeRouteOf);
    const now = new Date();
    const direct = firstDelivery && this.config.ROUTE_DIRECT_WAIT_MS > 0;
    const known =
      direct || routes.some((route) => route.streamed)
        ? await this.takenBefore(taken.map(({ mail }) => mail.inbound_id))
        : new Set<string>();
    await this.streams.buffer(taken, routes, now, known);
    // A temporary stream route has no URL: its mail goes to its stream only.
    const posted = routes.filter((route) => !route.temporary);
    const planned = taken.flatMap((message) => plannedCalls(message, posted, now));
    const attempts = direct
      ? this.attemptNow(
          planned.filter((row) => !known.has(row.inboundId)),
          posted,
        )
      : new Map<string, DirectRouteAttempt>();
    await endedWithin([...attempts.values()], this.config.ROUTE_DIRECT_WAIT_MS);
    this.worker.takeBack([...attempts.values()]);
    const leaseUntil = new Date(Date.now() + this.config.ROUTE_LEASE_MS);
    const rows = planned.map((row) => {
      const attempt = attempts.get(row.id);
      return attempt ? attempted(row, attempt, leaseUntil) : row;
    });
    const { stored, disabledDomains } = await this.dataSource.transaction(async (manager) => {
      const inserted = await preparedQuery<{ id: string }>(manager, INSERT_MESSAGES_SQL, [
        taken.map(({ mail }) => mail.inbound_id),
        taken.map(({ mail }) => mail.account_id),
        taken.map(({ mail }) => new Date(mail.received_at)),
        taken.map(({ raw }) => raw),
      ]);
      const insertedIds = new Set(inserted.map((row) => row.id));
      const kept = rows.filter((row) => insertedIds.has(row.inboundId));
      if (kept.length > 0) await insertCalls(manager, kept);
      const ended = kept.flatMap((row) => {
        const call = attempts.get(row.id)?.outcome;
        return call ? [routeCallRecord(row.id, row.routeId, call)] : [];
      });
      const disabled = await countFirstAttempts(
        manager,
        ended,
        this.config.ROUTE_DISABLE_AFTER_FAILURES,
      );
      return { stored: kept, disabledDomains: disabled };
    });
    if (disabledDomains.length > 0) this.matchEvents.changed(disabledDomains);
    for (const row of stored) {
      const attempt = attempts.get(row.id);
      if (attempt && attempt.outcome === undefined) this.worker.recordWhenEnded(attempt);
    }
    for (const { mail, parsed } of taken) {
      if ('refused' in parsed) {
        this.logger.warn(`inbound ${mail.inbound_id}: message refused: ${parsed.refused.message}`);
      }
    }
    if (stored.some((row) => row.state === 'pending' && row.attempts === 0)) this.worker.wake();
  }

  /** The first attempts of the planned calls that may be made now, by call id. */
  private attemptNow(
    planned: readonly PlannedCallRow[],
    routes: readonly IntakeRoute[],
  ): Map<string, DirectRouteAttempt> {
    const byId = new Map(routes.map((route) => [route.id, route]));
    const calls = planned.flatMap((row) => {
      const route = byId.get(row.routeId);
      if (!route || route.failing || row.state !== 'pending' || row.payload === null) return [];
      if (!this.worker.takesDirect(route.id)) return [];
      return [{ id: row.id, routeId: row.routeId, route, payload: row.payload }];
    });
    return new Map(this.worker.attemptNow(calls).map((attempt) => [attempt.call.id, attempt]));
  }

  /** The inbound ids taken before (stored). */
  private async takenBefore(inboundIds: readonly string[]): Promise<Set<string>> {
    const rows = await this.dataSource.manager.find(InboundMessageEntity, {
      select: { id: true },
      where: { id: In([...inboundIds]) },
    });
    return new Set(rows.map((row) => row.id));
  }

  /**
   * The message's bytes, carried by its event or spooled; null for a message already taken whose
   * spool has gone since. The MX stores a message's event and its spool at the same time: missing
   * bytes of a message received within ROUTE_SPOOL_WAIT_MS are waited for (the event is retried);
   * after that, gone or altered bytes of a message not taken can never be handled (a dead letter,
   * kept).
   */
  private async bytesOf(mail: RoutedMailData): Promise<Buffer | null> {
    if (mail.raw !== undefined) return Buffer.from(mail.raw, 'base64');
    if (!mail.spool) throw new UnprocessableMessageError(`inbound ${mail.inbound_id}: no bytes`);
    try {
      return await readUpload(this.connection, mail.spool);
    } catch (error) {
      if (!(error instanceof UploadUnavailableError)) throw error;
      const known = await this.dataSource.manager.existsBy(InboundMessageEntity, {
        id: mail.inbound_id,
      });
      if (known) return null;
      const waitedMs = Date.now() - Date.parse(mail.received_at);
      if (waitedMs < this.config.ROUTE_SPOOL_WAIT_MS) {
        throw new Error(`inbound ${mail.inbound_id}: spool not readable yet: ${error.message}`);
      }
      throw new UnprocessableMessageError(`inbound ${mail.inbound_id}: ${error.message}`);
    }
  }
}
