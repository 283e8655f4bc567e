import { randomUUID } from 'node:crypto';

import type { RoutedMailData } from '@envoi/contracts-routes';
import {
  InboundMessageRejected,
  type ParsedInboundMessage,
  parseInboundMessage,
} from '@envoi/shared-inbound-mail';
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
import { planDeliveries } from './delivery-plan';
import { InboundMessageEntity } from './inbound-message.entity';
import { RouteDeliveryEntity } from './route-delivery.entity';
import { RouteDeliveryWorker } from './route-delivery-worker.service';
import { type PayloadRoute, routingPayloadOf } from './routing-payload';

/** The message parsed within the inbound-mail bounds, or why the library refuses it. */
type ParsedMail = { message: ParsedInboundMessage } | { refused: InboundMessageRejected };

async function parsedMail(raw: Buffer): Promise<ParsedMail> {
  try {
    return { message: await parseInboundMessage(raw) };
  } catch (error) {
    if (error instanceof InboundMessageRejected) return { refused: error };
    throw error;
  }
}

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
  ) {}

  async accept(mail: RoutedMailData): Promise<void> {
    const raw = await this.spooled(mail);
    if (raw === null) return;
    const parsed = await parsedMail(raw);
    const routeIds = [...new Set(mail.recipients.flatMap((recipient) => recipient.route_ids))];
    const planned = await this.dataSource.transaction(async (manager) => {
      const routes = await manager.find(RouteEntity, {
        select: {
          id: true,
          groupByMessageId: true,
          attachments: true,
          headers: true,
          stripReplies: true,
        },
        where: { id: In(routeIds), accountId: mail.account_id, enabled: true },
      });
      const inserted = await manager.query<Array<{ id: string }>>(
        `INSERT INTO routes.inbound_messages (id, account_id, received_at, raw)
         VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING RETURNING id`,
        [mail.inbound_id, mail.account_id, new Date(mail.received_at), raw],
      );
      if (inserted.length === 0) return 0;
      const now = new Date();
      const deliveries = planDeliveries(mail.recipients, routes).map((planned) => {
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
      if (deliveries.length > 0) await manager.insert(RouteDeliveryEntity, deliveries);
      return deliveries.length;
    });
    if ('refused' in parsed) {
      this.logger.warn(`inbound ${mail.inbound_id}: message refused: ${parsed.refused.message}`);
    } else if (planned > 0) this.worker.wake();
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
