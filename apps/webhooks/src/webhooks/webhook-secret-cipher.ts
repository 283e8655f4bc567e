import { AesGcmCipher } from '@envoi/shared-secrets';

import type { WebhookEntity } from './webhook.entity';

/** Seals webhook signing secrets at rest, each bound to its own webhook's row. */
export class WebhookSecretCipher {
  private readonly cipher: AesGcmCipher;

  constructor(hexKey: string) {
    this.cipher = new AesGcmCipher(hexKey);
  }

  seal(secret: string, webhookId: string): string {
    return this.cipher.sealText(secret, context(webhookId));
  }

  open(webhook: Pick<WebhookEntity, 'id' | 'secretCiphertext'>): string {
    return this.cipher.openText(webhook.secretCiphertext, context(webhook.id));
  }
}

function context(webhookId: string): string {
  return `envoi.webhook-secret:${webhookId}`;
}
