import { AccountsSubjects } from '@envoi/contracts-accounts';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

/** Broadcasts for the gateways' verification caches (at most once; the caches also expire). */
@Injectable()
export class ApiKeyEvents {
  private readonly logger = new Logger(ApiKeyEvents.name);

  constructor(private readonly rpc: RpcClient) {}

  /** Tells every gateway replica to drop its cached verification of the key. */
  changed(keyId: string, accountId: string): void {
    try {
      this.rpc.emit(AccountsSubjects.apiKeyChanged, { key_id: keyId, account_id: accountId });
    } catch (error) {
      this.logger.error(`could not announce the change of api key ${keyId}: ${String(error)}`);
    }
  }
}
