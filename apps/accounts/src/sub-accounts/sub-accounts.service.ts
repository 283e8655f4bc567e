import { randomUUID } from 'node:crypto';

import type {
  CreateSubAccountBody,
  SubAccountRecord,
  UpdateSubAccountBody,
} from '@envoi/contracts-accounts';
import type { MessageResponse, Page, PageRequest } from '@envoi/contracts-core';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

import type { AccountEntity } from '../accounts/account.entity';
import { requireAccount } from '../accounts/account-lookup';
import { AccountsException } from '../accounts/accounts.exception';
import { AccountsRepository } from '../accounts/accounts.repository';
import { toSubAccountRecord } from './sub-account.mapper';
import { SubAccountCountsService } from './sub-account-counts.service';
import { SubAccountEvents } from './sub-account-events';
import { assertMayCreateSubAccount, storedWebsite, subAccountChanges } from './sub-account-rules';
import { SubAccountsException } from './sub-accounts.exception';
import { SubAccountsRepository } from './sub-accounts.repository';

/** A child and its parent as read in the same transaction. */
interface Family {
  parent: AccountEntity;
  child: AccountEntity;
}

/**
 * The children of a top-level account (spec 3.1): created by the parent, owned by the parent's
 * owner (without a member row), soft-deleted, suspended and unsuspended by the parent. A deleted
 * child can still be read (status `deleted`); every mutation of it is not_found.
 */
@Injectable()
export class SubAccountsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: AccountsRepository,
    private readonly children: SubAccountsRepository,
    private readonly counts: SubAccountCountsService,
    private readonly events: SubAccountEvents,
  ) {}

  async list(parentId: string, page: PageRequest): Promise<Page<SubAccountRecord>> {
    const parent = await requireAccount(this.accounts, parentId);
    const result = await this.children.page(parentId, page);
    return { ...result, data: await this.toRecords(parent, result.data) };
  }

  async create(parentId: string, body: CreateSubAccountBody): Promise<SubAccountRecord> {
    const family = await this.dataSource.transaction(async (manager): Promise<Family> => {
      const parent = await this.children.holdParent(parentId, manager);
      if (!parent) throw AccountsException.notFound();
      assertMayCreateSubAccount(parent);
      const id = randomUUID();
      await this.accounts.insert(
        {
          id,
          parentAccountId: parent.id,
          name: body.name,
          website: storedWebsite(body.website),
          monthlyCredit: body.monthly_credit ?? 0,
          ownerId: parent.ownerId,
        },
        manager,
      );
      return { parent, child: await this.requireChild(parent.id, id, manager) };
    });
    return this.toRecord(family);
  }

  async get(parentId: string, childId: string): Promise<SubAccountRecord> {
    const parent = await requireAccount(this.accounts, parentId);
    return this.toRecord({ parent, child: await this.requireChild(parentId, childId) });
  }

  /** Null or omitted fields stay unchanged; at least one given value must differ. */
  async update(
    parentId: string,
    childId: string,
    body: UpdateSubAccountBody,
  ): Promise<SubAccountRecord> {
    const family = await this.mutate(parentId, childId, (child) => subAccountChanges(child, body));
    return this.toRecord(family);
  }

  async delete(parentId: string, childId: string): Promise<MessageResponse> {
    await this.mutate(parentId, childId, () => ({ deletedAt: () => 'now()' }));
    this.events.statusChanged([childId]);
    return { message: 'sub account deleted' };
  }

  /** Suspends the child itself (again, with the new reason, when it already was). */
  async suspend(parentId: string, childId: string, reason: string): Promise<SubAccountRecord> {
    const family = await this.mutate(parentId, childId, () => ({
      suspendedAt: () => 'now()',
      suspensionReason: reason,
    }));
    this.events.statusChanged([childId]);
    return this.toRecord(family);
  }

  /** Lifts the child's own suspension: `active`, or `parent-suspended` while the parent is. */
  async unsuspend(parentId: string, childId: string): Promise<SubAccountRecord> {
    const family = await this.mutate(parentId, childId, () => ({
      suspendedAt: null,
      suspensionReason: null,
    }));
    this.events.statusChanged([childId]);
    return this.toRecord(family);
  }

  /** Applies the changes to a child that is not deleted; answers both as they are after it. */
  private mutate(
    parentId: string,
    childId: string,
    changesOf: (child: AccountEntity) => QueryDeepPartialEntity<AccountEntity>,
  ): Promise<Family> {
    return this.dataSource.transaction(async (manager) => {
      const parent = await requireAccount(this.accounts, parentId, manager);
      const child = await this.children.lockLiveChild(parentId, childId, manager);
      if (!child) throw SubAccountsException.notFound();
      await this.children.updateChild(child.id, changesOf(child), manager);
      return { parent, child: await this.requireChild(parentId, childId, manager) };
    });
  }

  private async requireChild(
    parentId: string,
    childId: string,
    manager?: EntityManager,
  ): Promise<AccountEntity> {
    const child = await this.children.findChild(parentId, childId, manager);
    if (!child) throw SubAccountsException.notFound();
    return child;
  }

  private async toRecord(family: Family): Promise<SubAccountRecord> {
    const [record] = await this.toRecords(family.parent, [family.child]);
    if (!record) throw SubAccountsException.notFound();
    return record;
  }

  private async toRecords(
    parent: AccountEntity,
    children: readonly AccountEntity[],
  ): Promise<SubAccountRecord[]> {
    const counts = await this.counts.of(children.map((child) => child.id));
    return children.map((child) =>
      toSubAccountRecord(
        child,
        parent.suspendedAt,
        counts.get(child.id) ?? { domainCount: 0, memberCount: 0 },
      ),
    );
  }
}
