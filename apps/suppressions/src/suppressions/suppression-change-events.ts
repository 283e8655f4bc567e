import { SuppressionsSubjects } from '@envoi/contracts-suppressions';
import { NATS_CONNECTION, RpcClient } from '@envoi/shared-nats';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from 'nats';

/**
 * Broadcasts for the senders' snapshots of an account's suppressions (SuppressionsSubjects.changed),
 * sent once a change has committed. The bus has taken them (flushed) before the change is
 * answered, so a send its caller makes next finds the snapshots dropped; a broadcast that could
 * not be sent is logged (the snapshots also expire).
 */
@Injectable()
export class SuppressionChangeEvents {
  private readonly logger = new Logger(SuppressionChangeEvents.name);

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
  ) {}

  async changed(accountIds: Iterable<string>): Promise<void> {
    try {
      for (const accountId of new Set(accountIds)) {
        this.rpc.emit(SuppressionsSubjects.changed, { account_id: accountId });
      }
      await this.connection.flush();
    } catch (error) {
      this.logger.error(`could not announce a suppression change: ${String(error)}`);
    }
  }
}
