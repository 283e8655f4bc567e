import { AesGcmCipher } from '@envoi/shared-secrets';

/** Seals SMTP passwords at rest, each bound to its own credential's row. */
export class SmtpPasswordCipher {
  private readonly cipher: AesGcmCipher;

  constructor(hexKey: string) {
    this.cipher = new AesGcmCipher(hexKey);
  }

  seal(password: string, credentialId: string): string {
    return this.cipher.sealText(password, context(credentialId));
  }

  open(sealed: string, credentialId: string): string {
    return this.cipher.openText(sealed, context(credentialId));
  }
}

function context(credentialId: string): string {
  return `envoi.smtp-password:${credentialId}`;
}
