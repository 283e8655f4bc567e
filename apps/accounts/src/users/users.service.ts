import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

import type { UserEntity } from './user.entity';
import { UsersRepository } from './users.repository';

/** Emails are compared and stored trimmed and lowercased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

@Injectable()
export class UsersService {
  constructor(private readonly users: UsersRepository) {}

  /**
   * The user with this email, created when there is none. Safe under concurrency: the insert
   * yields to a concurrent one on the unique email index and the winner is read back.
   */
  findOrCreateByEmail(
    manager: EntityManager,
    email: string,
    name: string | undefined,
  ): Promise<UserEntity> {
    return this.users.insertOrFindByEmail(normalizeEmail(email), name?.trim() ?? '', manager);
  }

  /** A user without an email address (see UserEntity.email). */
  createWithoutEmail(manager: EntityManager, name: string | undefined): Promise<UserEntity> {
    return this.users.insertWithoutEmail(name?.trim() ?? '', manager);
  }
}
