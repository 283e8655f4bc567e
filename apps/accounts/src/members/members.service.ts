import type { AddMemberBody, MemberRecord, MemberRole } from '@envoi/contracts-accounts';
import type { MessageResponse, PlainList } from '@envoi/contracts-core';
import { isUniqueViolation } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { EntityManager } from 'typeorm';
import { DataSource } from 'typeorm';

import { assertAccountExists, requireAccount } from '../accounts/account-lookup';
import { UsersService } from '../users/users.service';
import { MemberEntity } from './member.entity';
import { toMemberRecord } from './member.mapper';
import { MembersException } from './members.exception';

@Injectable()
export class MembersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
  ) {}

  async list(accountId: string): Promise<PlainList<MemberRecord>> {
    const manager = this.dataSource.manager;
    await assertAccountExists(manager, accountId);
    const members = await manager.find(MemberEntity, {
      where: { accountId },
      order: { createdAt: 'ASC', userId: 'ASC' },
    });
    return { object: 'list', data: members.map(toMemberRecord) };
  }

  /** Adds the user with this email (created when unknown) to the account. */
  add(accountId: string, body: AddMemberBody): Promise<MemberRecord> {
    return this.dataSource.transaction(async (manager) => {
      await assertAccountExists(manager, accountId);
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
    const member = manager.create(MemberEntity, { accountId, userId, role });
    try {
      await manager.insert(MemberEntity, member);
    } catch (error) {
      if (isUniqueViolation(error, 'members_pkey')) throw MembersException.alreadyExists();
      throw error;
    }
    return member;
  }

  async remove(accountId: string, userId: string): Promise<MessageResponse> {
    const account = await requireAccount(this.dataSource.manager, accountId);
    if (account.ownerId === userId) throw MembersException.ownerCannotBeRemoved();
    const result = await this.dataSource.manager.delete(MemberEntity, { accountId, userId });
    if (!result.affected) throw MembersException.notFound();
    return { message: `member ${userId} removed successfully` };
  }
}
