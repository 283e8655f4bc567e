import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

import { UserEntity } from './user.entity';

/** Emails are compared and stored trimmed and lowercased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

@Injectable()
export class UsersService {
  /**
   * The user with this email, created when there is none. Safe under concurrency: the insert
   * yields to a concurrent one on the unique email index and the winner is read back.
   */
  async findOrCreateByEmail(
    manager: EntityManager,
    email: string,
    name: string | undefined,
  ): Promise<UserEntity> {
    const normalized = normalizeEmail(email);
    await manager
      .createQueryBuilder()
      .insert()
      .into(UserEntity)
      .values({ id: randomUUID(), email: normalized, name: name?.trim() ?? '' })
      .orIgnore()
      .execute();
    return manager.findOneByOrFail(UserEntity, { email: normalized });
  }

  /** A user without an email address (see UserEntity.email). */
  async createWithoutEmail(manager: EntityManager, name: string | undefined): Promise<UserEntity> {
    const user = manager.create(UserEntity, {
      id: randomUUID(),
      email: null,
      name: name?.trim() ?? '',
    });
    await manager.insert(UserEntity, user);
    return user;
  }
}
