import type { MemberRole } from '@envoi/contracts-accounts';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { MemberEntity } from './member.entity';

/** The statements on accounts.members. */
@Injectable()
export class MembersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The account's members, oldest first. */
  listByAccount(accountId: string): Promise<MemberEntity[]> {
    return this.dataSource.manager.find(MemberEntity, {
      where: { accountId },
      order: { createdAt: 'ASC', userId: 'ASC' },
    });
  }

  /** Fails with a unique violation (members_pkey) when the user is a member already. */
  async insert(
    accountId: string,
    userId: string,
    role: MemberRole,
    manager: EntityManager,
  ): Promise<MemberEntity> {
    const member = manager.create(MemberEntity, { accountId, userId, role });
    await manager.insert(MemberEntity, member);
    return member;
  }

  /** False when the user was no member of the account. */
  async delete(accountId: string, userId: string): Promise<boolean> {
    const result = await this.dataSource.manager.delete(MemberEntity, { accountId, userId });
    return Boolean(result.affected);
  }
}
