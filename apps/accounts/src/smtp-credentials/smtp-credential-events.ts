import { AccountsSubjects } from '@envoi/contracts-accounts';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

import type { SmtpCredentialEntity } from './smtp-credential.entity';

/** Broadcasts for the smtp replicas' login caches (at most once; the caches also expire). */
@Injectable()
export class SmtpCredentialEvents {
  private readonly logger = new Logger(SmtpCredentialEvents.name);

  constructor(private readonly rpc: RpcClient) {}

  changed(credential: Pick<SmtpCredentialEntity, 'id' | 'accountId' | 'username'>): void {
    try {
      this.rpc.emit(AccountsSubjects.smtpCredentialChanged, {
        credential_id: credential.id,
        account_id: credential.accountId,
        username: credential.username,
      });
    } catch (error) {
      this.logger.error(
        `could not announce the change of smtp credential ${credential.id}: ${String(error)}`,
      );
    }
  }
}
