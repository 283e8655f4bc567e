import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

import { UserEntity } from './user.entity';

/** The statements on accounts.users; users are only written inside an account's transaction. */
@Injectable()
export class UsersRepository {
  /** Inserts a user with this (normalised) email unless one exists; answers the stored one. */
  async insertOrFindByEmail(
    email: string,
    name: string,
    manager: EntityManager,
  ): Promise<UserEntity> {
    await manager
      .createQueryBuilder()
      .insert()
      .into(UserEntity)
      .values({ id: randomUUID(), email, name })
      .orIgnore()
      .execute();
    return manager.findOneByOrFail(UserEntity, { email });
  }

  async insertWithoutEmail(name: string, manager: EntityManager): Promise<UserEntity> {
    const user = manager.create(UserEntity, { id: randomUUID(), email: null, name });
    await manager.insert(UserEntity, user);
    return user;
  }
}
