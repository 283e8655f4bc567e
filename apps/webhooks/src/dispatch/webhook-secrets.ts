import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';

const IV_LENGTH = 12;
const TAG_LENGTH = 16;

/**
 * The signing secrets at rest: base64 of `IV (12) | tag (16) | AES-256-GCM ciphertext` under
 * WEBHOOKS_SECRET_KEY, bound to the webhook's id. The one place the delivery engine reads a
 * secret (to be pointed at the management API's cipher once it exists).
 */
@Injectable()
export class WebhookSecrets {
  private readonly configuredKey: Buffer | null;

  constructor(config: WebhooksConfig) {
    const hex = config.WEBHOOKS_SECRET_KEY;
    this.configuredKey = hex === undefined ? null : Buffer.from(hex, 'hex');
  }

  private get key(): Buffer {
    if (!this.configuredKey) throw new Error('WEBHOOKS_SECRET_KEY is not set');
    return this.configuredKey;
  }

  seal(secret: string, webhookId: string): string {
    const iv = randomBytes(IV_LENGTH);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_LENGTH });
    cipher.setAAD(associatedData(webhookId));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
  }

  /** Throws when the ciphertext does not authenticate (another key, another webhook's row). */
  open(sealed: string, webhookId: string): string {
    const bytes = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_LENGTH), {
      authTagLength: TAG_LENGTH,
    });
    decipher.setAAD(associatedData(webhookId));
    decipher.setAuthTag(bytes.subarray(IV_LENGTH, IV_LENGTH + TAG_LENGTH));
    return Buffer.concat([
      decipher.update(bytes.subarray(IV_LENGTH + TAG_LENGTH)),
      decipher.final(),
    ]).toString('utf8');
  }
}

function associatedData(webhookId: string): Buffer {
  return Buffer.from(`envoi.webhook-secret:${webhookId}`, 'utf8');
}
