import { AccountsSubjects } from '@envoi/contracts-accounts';
import { TtlCache } from '@envoi/shared-cache';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { MessagesConfig } from '../messages.config';
import type { AccountDefaults } from '../messages/send-options';

const MAX_ENTRIES = 10_000;

/** The account's defaults, and its cap on messages per billing period (0: none). */
export interface SendingAccount extends AccountDefaults {
  monthlyCredit: number;
}

/**
 * An account's tracking and retention defaults and its monthly credit (accounts service), reused
 * for a short while: a change applies to sends accepted after ACCOUNT_CACHE_TTL_MS at the latest.
 */
@Injectable()
export class AccountDefaultsService {
  private readonly cache = new TtlCache<SendingAccount>(MAX_ENTRIES);

  constructor(
    private readonly rpc: RpcClient,
    private readonly config: MessagesConfig,
  ) {}

  get(accountId: string): Promise<SendingAccount> {
    return this.cache.get(
      accountId,
      async () => {
        const account = await this.rpc.request(AccountsSubjects.getSendingSettings, {
          account_id: accountId,
        });
        return {
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
