import type { DomainDeletedData } from '@envoi/contracts-domains';
import { Injectable } from '@nestjs/common';

import { SmtpCredentialEvents } from './smtp-credential-events';
import { SmtpCredentialsRepository } from './smtp-credentials.repository';

/** The domains scoped credentials are linked to, as domains go away. */
@Injectable()
export class SmtpCredentialDomains {
  constructor(
    private readonly credentials: SmtpCredentialsRepository,
    private readonly events: SmtpCredentialEvents,
  ) {}

  /**
   * Unlinks a deleted domain from the account's scoped credentials, which then no longer send
   * from it, and tells the smtp replicas. Idempotent: a redelivery finds nothing left to unlink.
   */
  async unlinkDeletedDomain(deletion: DomainDeletedData): Promise<void> {
    const changed = await this.credentials.unlinkDomain(deletion.account_id, deletion.domain_id);
    for (const credential of changed) this.events.changed(credential);
  }
}
