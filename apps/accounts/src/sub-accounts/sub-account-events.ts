import { AccountsSubjects } from '@envoi/contracts-accounts';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

/** Broadcasts status changes (at most once; the gateways' caches also expire). */
@Injectable()
export class SubAccountEvents {
  private readonly logger = new Logger(SubAccountEvents.name);

  constructor(private readonly rpc: RpcClient) {}

  /** Tells every replica of every service that these accounts changed status; after the commit. */
  statusChanged(accountIds: string[]): void {
    try {
      this.rpc.emit(AccountsSubjects.accountStatusChanged, { account_ids: accountIds });
    } catch (error) {
      this.logger.error(
        `could not announce the status change of ${accountIds.join(', ')}: ${String(error)}`,
      );
    }
  }
}
