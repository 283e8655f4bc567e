import { CodedError } from '@envoi/contracts-core';
import {
  type AttachedWebhookStreamRecord,
  type OpenedWebhookStreamRecord,
  WebhooksErrorCode,
  type WebhookStreamAckRecord,
  type WebhookStreamEventsRecord,
  WebhookStreamSubjects,
} from '@envoi/contracts-webhooks';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

import { assertTargetGranted } from '../webhooks/webhook-rules';
import { WebhooksException } from '../webhooks/webhooks.exception';
import { WebhooksRepository } from '../webhooks/webhooks.repository';
import { WebhooksService } from '../webhooks/webhooks.service';
import { StreamEventsRepository } from './stream-events.repository';

const listenerAttached = (): CodedError =>
  new CodedError(
    WebhooksErrorCode.StreamListenerAttached,
    'another listener is attached to this webhook; use force_reconnect=true to replace it',
  );

const notAttached = (): CodedError =>
  new CodedError(
    WebhooksErrorCode.StreamNotAttached,
    'this listener is no longer attached to the webhook',
  );

/**
 * Webhook streams (platform notes 1.12): opening one (a temporary webhook, or an existing one
 * whose events are then also buffered), one listener attached at a time over every gateway, and
 * the buffer it reads and acknowledges.
 */
@Injectable()
export class WebhookStreamService {
  private readonly logger = new Logger(WebhookStreamService.name);

  constructor(
    private readonly webhooksService: WebhooksService,
    private readonly webhooks: WebhooksRepository,
    private readonly events: StreamEventsRepository,
    private readonly rpc: RpcClient,
  ) {}

  /** `granted` as in WebhooksService.update: an existing webhook needs the rights to update it. */
  async open(
    accountId: string,
    webhookId: string | undefined,
    granted: readonly string[] | undefined,
  ): Promise<OpenedWebhookStreamRecord> {
    if (webhookId === undefined) {
      const created = await this.webhooksService.createTemporary(accountId, granted);
      return { webhook_id: created.webhook.id };
    }
    await this.requireGranted(accountId, webhookId, granted);
    await this.events.markStreamed(webhookId);
    return { webhook_id: webhookId };
  }

  /** `granted` as in open: a domain-scoped key listens only to webhooks all of whose domains it holds. */
  async attach(
    accountId: string,
    webhookId: string,
    sessionId: string,
    force: boolean,
    leaseMs: number,
    granted: readonly string[] | undefined,
  ): Promise<AttachedWebhookStreamRecord> {
    if (granted !== undefined) await this.requireGranted(accountId, webhookId, granted);
    const result = await this.events.attach(accountId, webhookId, sessionId, force, leaseMs);
    if (!result.attached) {
      throw result.reason === 'busy' ? listenerAttached() : WebhooksException.notFound();
    }
    try {
      this.rpc.emit(WebhookStreamSubjects.attached, {
        webhook_id: webhookId,
        session_id: sessionId,
      });
    } catch (error) {
      // The replaced listener also learns it on its next renewal.
      this.logger.warn(`could not announce the attached listener: ${String(error)}`);
    }
    return { replay_until_seq: result.replayUntilSeq };
  }

  /** The webhook, visible to the key and within its domains (404, 403 otherwise). */
  private async requireGranted(
    accountId: string,
    webhookId: string,
    granted: readonly string[] | undefined,
  ): Promise<void> {
    const found = await this.webhooks.find(accountId, webhookId, granted);
    if (!found) throw WebhooksException.notFound();
    assertTargetGranted({ scope: found.webhook.scope, domains: found.domains }, granted);
  }

  async read(
    webhookId: string,
    sessionId: string,
    afterSeq: number,
    limit: number,
  ): Promise<WebhookStreamEventsRecord> {
    if (!(await this.events.isAttached(webhookId, sessionId))) throw notAttached();
    const rows = await this.events.read(webhookId, afterSeq, limit);
    return {
      data: rows.map((row) => ({
        seq: row.seq,
        event_id: row.eventId,
        event_type: row.eventType,
        body: row.body,
        created_at: row.createdAt.toISOString(),
      })),
    };
  }

  /** Renews the attachment, then drops what the listener was written up to `seq`. */
  async ack(
    webhookId: string,
    sessionId: string,
    seq: number,
    leaseMs: number,
  ): Promise<WebhookStreamAckRecord> {
    if (!(await this.events.renew(webhookId, sessionId, leaseMs))) return { attached: false };
    if (seq > 0) await this.events.removeUpTo(webhookId, seq);
    return { attached: true };
  }

  async detach(webhookId: string, sessionId: string): Promise<WebhookStreamAckRecord> {
    return { attached: !(await this.events.detach(webhookId, sessionId)) };
  }
}
