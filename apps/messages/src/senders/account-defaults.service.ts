import { AccountsSubjects, type AccountStatus } from '@envoi/contracts-accounts';
import {
  BroadcastDroppedCache,
  NATS_CONNECTION,
  RpcClient,
  subscribeBroadcast,
} from '@envoi/shared-nats';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';

import { MessagesConfig } from '../messages.config';
import type { AccountDefaults } from '../messages/send-options';

const MAX_ENTRIES = 10_000;

/** The account's defaults, its cap on messages per billing period (0: none) and its status. */
export interface SendingAccount extends AccountDefaults {
  monthlyCredit: number;
  status: AccountStatus;
}

/**
 * An account's tracking and retention defaults, its monthly credit and its status (accounts
 * service), reused for a short while: a change of the defaults or the credit applies to sends
 * accepted after ACCOUNT_CACHE_TTL_MS at the latest; a change of status drops the account at
 * once (the accounts service broadcasts it to every replica), the TTL bounding a lost broadcast.
 */
@Injectable()
export class AccountDefaultsService extends BroadcastDroppedCache<SendingAccount> {
  private readonly logger = new Logger(AccountDefaultsService.name);

  constructor(
    private readonly rpc: RpcClient,
    private readonly config: MessagesConfig,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
  ) {
    super(MAX_ENTRIES);
  }

  protected listen(drop: (accountId: string) => void): Subscription[] {
    return [
      subscribeBroadcast(
        this.connection,
        AccountsSubjects.accountStatusChanged,
        (event) => event.account_ids.forEach(drop),
        (error) => this.logger.warn(`account status change broadcast: ${String(error)}`),
      ),
    ];
  }

  get(accountId: string): Promise<SendingAccount> {
    return this.cache.get(
      accountId,
      async () => {
        const account = await this.rpc.request(AccountsSubjects.getSendingSettings, {
          account_id: accountId,
        });
        return {
          status: account.status,
          monthlyCredit: account.monthly_credit,
          trackOpens: account.track_opens,
          trackClicks: account.track_clicks,
          metadataDays: account.message_metadata_retention,
          dataDays: account.message_data_retention,
        };
      },
      () => this.config.ACCOUNT_CACHE_TTL_MS,
    );
  }
}
