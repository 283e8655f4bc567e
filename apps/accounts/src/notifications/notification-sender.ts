import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';

import { AccountsConfig } from '../accounts.config';
import type { ComposedNotification } from './notification-composer';
import { type Smarthost, smarthostOf } from './smarthost';

/**
 * Sends notifications through the operator's smarthost, never through the customers' sending
 * pipeline. One message per notification, its recipients in Bcc (one SMTP transaction: the
 * smarthost takes it for all of them or it is tried again).
 */
@Injectable()
export class NotificationSender implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(NotificationSender.name);
  private readonly smarthost: Smarthost | null;
  private transporter: Transporter<SMTPTransport.SentMessageInfo> | null = null;

  constructor(config: AccountsConfig) {
    this.smarthost = smarthostOf(config);
  }

  get enabled(): boolean {
    return this.smarthost !== null;
  }

  onModuleInit(): void {
    if (this.smarthost === null) {
      this.logger.log('notifications are off: NOTIFICATIONS_SMTP_URL is empty');
      return;
    }
    this.transporter = createTransport(this.smarthost.transport);
    this.logger.log(`notifications go out through ${this.smarthost.description}`);
  }

  onModuleDestroy(): void {
    this.transporter?.close();
  }

  /** Throws when the smarthost did not take the message (it is then tried again). */
  async send(recipients: readonly string[], notification: ComposedNotification): Promise<void> {
    if (!this.smarthost || !this.transporter || recipients.length === 0) return;
    const info = await this.transporter.sendMail({
      from: this.smarthost.from,
      bcc: [...recipients],
      subject: notification.subject,
      text: notification.text,
      html: notification.html,
    });
    if (info.rejected.length > 0) {
      this.logger.warn(
        `notification "${notification.subject}" refused for ${info.rejected.join(', ')}`,
      );
    }
  }
}
