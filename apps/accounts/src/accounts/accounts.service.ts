import { randomUUID } from 'node:crypto';

import {
  type AccountRecord,
  type AccountSendingRecord,
  type CreateAccountRequest,
  type CreatedAccount,
  type UpdateAccountBody,
} from '@envoi/contracts-accounts';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { ApiKeysService } from '../api-keys/api-keys.service';
import { MembersService } from '../members/members.service';
import { UsersService } from '../users/users.service';
import {
  DEFAULT_MESSAGE_DATA_RETENTION_DAYS,
  DEFAULT_MESSAGE_METADATA_RETENTION_DAYS,
} from './account.entity';
import { toAccountRecord } from './account.mapper';
import { requireAccount } from './account-lookup';
import { accountStatus } from './account-status';
import { AccountsException } from './accounts.exception';
import { type AccountChanges, AccountsRepository } from './accounts.repository';

/** Only the fields present in the body; absent ones stay as they are. */
function toAccountChanges(body: UpdateAccountBody): AccountChanges {
  const changes: AccountChanges = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.website !== undefined) changes.website = body.website;
  if (body.about !== undefined) changes.about = body.about;
  if (body.track_opens !== undefined) changes.trackOpens = body.track_opens;
  if (body.track_clicks !== undefined) changes.trackClicks = body.track_clicks;
  if (body.reject_bad_recipients !== undefined) {
    changes.rejectBadRecipients = body.reject_bad_recipients;
  }
  if (body.reject_mistyped_recipients !== undefined) {
    changes.rejectMistypedRecipients = body.reject_mistyped_recipients;
  }
  if (body.message_metadata_retention !== undefined) {
    changes.messageMetadataRetention = body.message_metadata_retention;
  }
  if (body.message_data_retention !== undefined) {
    changes.messageDataRetention = body.message_data_retention;
  }
  return changes;
}

@Injectable()
export class AccountsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: AccountsRepository,
    private readonly users: UsersService,
    private readonly members: MembersService,
    private readonly apiKeys: ApiKeysService,
  ) {}

  /**
   * Creates an account with its owner (an Administrator member) and a full-access key, in one
   * transaction. Without `owner_email` the owner is a user with no email address.
   */
  create(request: CreateAccountRequest): Promise<CreatedAccount> {
    return this.dataSource.transaction(async (manager) => {
      const parentAccountId = request.parent_account_id ?? null;
      if (parentAccountId !== null && !(await this.accounts.exists(parentAccountId, manager))) {
        throw AccountsException.parentNotFound();
      }
      const owner = request.owner_email
        ? await this.users.findOrCreateByEmail(manager, request.owner_email, request.owner_name)
        : await this.users.createWithoutEmail(manager, request.owner_name);
      const account = await this.accounts.insert(
        {
          id: randomUUID(),
          parentAccountId,
          name: request.name,
          website: null,
          about: '',
          trackOpens: false,
          trackClicks: false,
          rejectBadRecipients: false,
          rejectMistypedRecipients: false,
          messageMetadataRetention: DEFAULT_MESSAGE_METADATA_RETENTION_DAYS,
          messageDataRetention: DEFAULT_MESSAGE_DATA_RETENTION_DAYS,
          ownerId: owner.id,
        },
        manager,
      );
      await this.members.addInTransaction(manager, account.id, owner.id, 'Administrator');
      const apiKey = await this.apiKeys.createFullAccessInTransaction(
        manager,
        account.id,
        parentAccountId !== null,
      );
      return { account: toAccountRecord(account), api_key: apiKey };
    });
  }

  async get(accountId: string): Promise<AccountRecord> {
    return toAccountRecord(await requireAccount(this.accounts, accountId));
  }

  /** What accepting a send needs of the account (messages service), its status included. */
  async sendingSettings(accountId: string): Promise<AccountSendingRecord> {
    const account = await requireAccount(this.accounts, accountId);
    const parent =
      account.parentAccountId === null
        ? null
        : await this.accounts.findById(account.parentAccountId);
    return {
      account_id: account.id,
      status: accountStatus({
        deletedAt: account.deletedAt,
        suspendedAt: account.suspendedAt,
        parentSuspendedAt: parent?.suspendedAt ?? null,
      }),
      track_opens: account.trackOpens,
      track_clicks: account.trackClicks,
      message_metadata_retention: account.messageMetadataRetention,
      message_data_retention: account.messageDataRetention,
      monthly_credit: account.monthlyCredit,
    };
  }

  /** Applies the provided fields and returns the account as it is after the update. */
  update(accountId: string, body: UpdateAccountBody): Promise<AccountRecord> {
    return this.dataSource.transaction(async (manager) => {
      const changes = toAccountChanges(body);
      if (Object.keys(changes).length > 0) {
        const updated = await this.accounts.update(accountId, changes, manager);
        if (!updated) throw AccountsException.notFound();
      }
      return toAccountRecord(await requireAccount(this.accounts, accountId, manager));
    });
  }
}
