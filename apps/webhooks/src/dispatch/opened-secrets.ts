import type { WebhookSecretCipher } from '../webhooks/webhook-secret-cipher';

/** Webhooks whose opened secret is kept at most (the oldest opened goes first). */
export const OPENED_SECRETS_MAX = 10_000;

/**
 * The signing secrets of the webhooks being called, opened once per sealed value rather than once
 * per call: a webhook's sealed secret never changes (secrets are not updatable), and should it
 * differ, it is opened again. An envelope that does not open is never kept.
 */
export class OpenedSecrets {
  private readonly opened = new Map<string, { sealed: string; secret: string }>();

  constructor(
    private readonly cipher: Pick<WebhookSecretCipher, 'open'>,
    private readonly max = OPENED_SECRETS_MAX,
  ) {}

  /** Throws what the cipher throws for an envelope that does not open. */
  open(webhookId: string, secretCiphertext: string): string {
    const kept = this.opened.get(webhookId);
    if (kept?.sealed === secretCiphertext) return kept.secret;
    const secret = this.cipher.open({ id: webhookId, secretCiphertext });
    this.opened.delete(webhookId);
    if (this.opened.size >= this.max) {
      const oldest = this.opened.keys().next();
      if (!oldest.done) this.opened.delete(oldest.value);
    }
    this.opened.set(webhookId, { sealed: secretCiphertext, secret });
    return secret;
  }
}
