import { randomUUID } from 'node:crypto';

import type { RoutedMailData } from '@envoi/contracts-routes';
import {
  NATS_CONNECTION,
  readUpload,
  UnprocessableMessageError,
  UploadUnavailableError,
} from '@envoi/shared-nats';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { NatsConnection } from 'nats';
import { DataSource, In } from 'typeorm';

import { RouteEntity } from '../routes/route.entity';
import { RouteStreamFeed } from '../stream/route-stream-feed';
import { planDeliveries, type PlannedRoute } from './delivery-plan';
import { InboundMessageEntity } from './inbound-message.entity';
import { RouteDeliveryEntity } from './route-delivery.entity';
import { RouteDeliveryWorker } from './route-delivery-worker.service';
import { type PayloadRoute, routingPayloadOf } from './routing-payload';
import { type ParsedMail, parsedMail, type TakenMail } from './taken-mail';

/** A planned call's columns: its body, or given up at once when its message is refused. */
function callColumns(
  mail: ParsedMail,
  call: { inboundId: string; raw: Buffer; recipients: string[] },
  route: PayloadRoute,
  now: Date,
): Pick<RouteDeliveryEntity, 'payload'> | Pick<RouteDeliveryEntity, 'state' | 'lastError'> {
  if ('refused' in mail) {
    const { reason, message } = mail.refused;
    return { state: 'given_up', lastError: `message refused (${reason}): ${message}` };
  }
  return { payload: JSON.stringify(routingPayloadOf(mail.message, call, route, now)) };
}

const INSERT_MESSAGES_SQL = `
  INSERT INTO routes.inbound_messages (id, account_id, received_at, raw)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::bytea[])
  ON CONFLICT (id) DO NOTHING
  RETURNING id`;

/** The calls of a message to the routes of its account (enabled ones), with their columns. */
function plannedCalls(
  { mail, raw, parsed }: TakenMail,
  routes: ReadonlyArray<PayloadRoute & PlannedRoute & { accountId: string }>,
  now: Date,
): Array<Partial<RouteDeliveryEntity>> {
  const own = routes.filter((route) => route.accountId === mail.account_id);
  return planDeliveries(mail.recipients, own).map((planned) => {
    const call = { inboundId: mail.inbound_id, raw, recipients: planned.recipients };
    return {
      id: randomUUID(),
      routeId: planned.route.id,
      inboundId: mail.inbound_id,
      recipients: planned.recipients,
      nextAttemptAt: now,
      ...callColumns(parsed, call, planned.route, now),
    };
  });
}

/**
 * Takes a routed message from the MX: copies it from its spool (which expires), parses it once
 * and plans its calls with their bodies, in one transaction, once per inbound id (a redelivered
 * event changes nothing). The stream event is acknowledged only after this commits: accepted
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
    private readonly streams: RouteStreamFeed,
  ) {}

  async accept(mail: RoutedMailData): Promise<void> {
    await this.acceptAll([mail]);
  }

  /**
   * Takes the routed messages of a batch of events together: their spools read at once, each
   * message parsed once, then one transaction with multi-row INSERTs. Events repeating an
   * inbound id (of this batch or taken before) plan nothing more.
   */
  async acceptAll(mails: readonly RoutedMailData[]): Promise<void> {
    const unique = [...new Map(mails.map((mail) => [mail.inbound_id, mail])).values()];
    const spooled = await Promise.all(unique.map((mail) => this.spooled(mail)));
    const taken: TakenMail[] = [];
    for (const [index, mail] of unique.entries()) {
      const raw = spooled[index];
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
    const routes = await this.dataSource.manager.find(RouteEntity, {
      select: {
        id: true,
        accountId: true,
        groupByMessageId: true,
        attachments: true,
        headers: true,
        stripReplies: true,
        streamed: true,
        temporary: true,
      },
      where: { id: In(routeIds), enabled: true },
    });
    const now = new Date();
    await this.streams.buffer(taken, routes, now);
    // A temporary stream route has no URL: its mail goes to its stream only.
    const posted = routes.filter((route) => !route.temporary);
    const planned = await this.dataSource.transaction(async (manager) => {
      const inserted = await manager.query<Array<{ id: string }>>(INSERT_MESSAGES_SQL, [
        taken.map(({ mail }) => mail.inbound_id),
        taken.map(({ mail }) => mail.account_id),
        taken.map(({ mail }) => new Date(mail.received_at)),
        taken.map(({ raw }) => raw),
      ]);
      const insertedIds = new Set(inserted.map((row) => row.id));
      const deliveries = taken
        .filter(({ mail }) => insertedIds.has(mail.inbound_id))
        .flatMap((message) => plannedCalls(message, posted, now));
      if (deliveries.length > 0) await manager.insert(RouteDeliveryEntity, deliveries);
      return deliveries.length;
    });
    for (const { mail, parsed } of taken) {
      if ('refused' in parsed) {
        this.logger.warn(`inbound ${mail.inbound_id}: message refused: ${parsed.refused.message}`);
      }
    }
    if (planned > 0) this.worker.wake();
  }

  /**
   * The spooled bytes; null for a message already taken whose spool has gone since. Gone or
   * altered bytes of a message not taken can never be handled (a dead letter, kept).
   */
  private async spooled(mail: RoutedMailData): Promise<Buffer | null> {
    try {
      return await readUpload(this.connection, mail.spool);
    } catch (error) {
      if (!(error instanceof UploadUnavailableError)) throw error;
      const known = await this.dataSource.manager.existsBy(InboundMessageEntity, {
        id: mail.inbound_id,
      });
      if (known) return null;
      throw new UnprocessableMessageError(`inbound ${mail.inbound_id}: ${error.message}`);
    }
  }
}
