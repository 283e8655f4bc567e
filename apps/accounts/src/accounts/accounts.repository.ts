import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type DeepPartial, type EntityManager } from 'typeorm';

import { AccountEntity } from './account.entity';

export type AccountChanges = Partial<
  Pick<
    AccountEntity,
    | 'name'
    | 'website'
    | 'about'
    | 'trackOpens'
    | 'trackClicks'
    | 'rejectBadRecipients'
    | 'rejectMistypedRecipients'
    | 'messageMetadataRetention'
    | 'messageDataRetention'
  >
>;

/** The statements on accounts.accounts. */
@Injectable()
export class AccountsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  findById(
    accountId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<AccountEntity | null> {
    return manager.findOneBy(AccountEntity, { id: accountId });
  }

  exists(accountId: string, manager: EntityManager = this.dataSource.manager): Promise<boolean> {
    return manager.existsBy(AccountEntity, { id: accountId });
  }

  async insert(fields: DeepPartial<AccountEntity>, manager: EntityManager): Promise<AccountEntity> {
    const account = manager.create(AccountEntity, fields);
    await manager.insert(AccountEntity, account);
    return account;
  }

  /** Applies the changes; false when there is no such account. */
  async update(
    accountId: string,
    changes: AccountChanges,
    manager: EntityManager,
  ): Promise<boolean> {
    const result = await manager.update(AccountEntity, { id: accountId }, changes);
    return Boolean(result.affected);
  }
}
