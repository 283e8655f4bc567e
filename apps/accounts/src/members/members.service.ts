import type { AddMemberBody, MemberRecord, MemberRole } from '@envoi/contracts-accounts';
import type { MessageResponse, PlainList } from '@envoi/contracts-core';
import { isUniqueViolation } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { EntityManager } from 'typeorm';
import { DataSource } from 'typeorm';

import { assertAccountExists, requireAccount } from '../accounts/account-lookup';
import { AccountsRepository } from '../accounts/accounts.repository';
import { UsersService } from '../users/users.service';
import type { MemberEntity } from './member.entity';
import { toMemberRecord } from './member.mapper';
import { MembersException } from './members.exception';
import { MembersRepository } from './members.repository';

@Injectable()
export class MembersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: AccountsRepository,
    private readonly members: MembersRepository,
    private readonly users: UsersService,
  ) {}

  async list(accountId: string): Promise<PlainList<MemberRecord>> {
    await assertAccountExists(this.accounts, accountId);
    const members = await this.members.listByAccount(accountId);
    return { object: 'list', data: members.map(toMemberRecord) };
  }

  /** Adds the user with this email (created when unknown) to the account. */
  add(accountId: string, body: AddMemberBody): Promise<MemberRecord> {
    return this.dataSource.transaction(async (manager) => {
      await assertAccountExists(this.accounts, accountId, manager);
      const user = await this.users.findOrCreateByEmail(manager, body.email, body.name);
      const member = await this.addInTransaction(manager, accountId, user.id, body.role);
      return toMemberRecord(member);
    });
  }

  async addInTransaction(
    manager: EntityManager,
    accountId: string,
    userId: string,
    role: MemberRole,
  ): Promise<MemberEntity> {
    try {
      return await this.members.insert(accountId, userId, role, manager);
    } catch (error) {
      if (isUniqueViolation(error, 'members_pkey')) throw MembersException.alreadyExists();
      throw error;
    }
  }

  async remove(accountId: string, userId: string): Promise<MessageResponse> {
    const account = await requireAccount(this.accounts, accountId);
    if (account.ownerId === userId) throw MembersException.ownerCannotBeRemoved();
    if (!(await this.members.delete(accountId, userId))) throw MembersException.notFound();
    return { message: `member ${userId} removed successfully` };
  }
}
