import type { AccountStatus } from '@envoi/contracts-accounts';
import type { Page, PageRequest } from '@envoi/contracts-core';
import type { ResolvedDomain } from '@envoi/contracts-domains';
import { keysetPage } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';

import { accountStatusSql } from '../accounts/account-status';
import { SmtpCredentialDomainEntity, SmtpCredentialEntity } from './smtp-credential.entity';

/** A credential with its linked domain names, in the order given. */
export interface StoredSmtpCredential {
  credential: SmtpCredentialEntity;
  domains: string[];
}

export interface SmtpLoginRow {
  credential_id: string;
  account_id: string;
  account_status: AccountStatus;
  scope: 'global' | 'scoped';
  sandbox: boolean;
  password_hash: string;
  domains: string[];
}

/** One indexed lookup by username, joined to the account and its parent for the status. */
const LOGIN_SQL = `
  SELECT c.id AS credential_id,
         c.account_id,
         ${accountStatusSql('a', 'p')} AS account_status,
         c.scope,
         c.sandbox,
         c.password_hash,
         ARRAY(
           SELECT d.domain FROM accounts.smtp_credential_domains d
           WHERE d.credential_id = c.id ORDER BY d.position
         ) AS domains
  FROM accounts.smtp_credentials c
  JOIN accounts.accounts a ON a.id = c.account_id
  LEFT JOIN accounts.accounts p ON p.id = a.parent_account_id
  WHERE c.username = $1`;

/** Credentials linked to at least one of the granted domains (a domain-scoped key's view). */
const WITHIN_GRANT =
  'EXISTS (SELECT 1 FROM accounts.smtp_credential_domains g WHERE g.credential_id = credential.id AND g.domain IN (:...granted))';

/** The statements on accounts.smtp_credentials and their domains. */
@Injectable()
export class SmtpCredentialsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async page(
    accountId: string,
    granted: readonly string[] | undefined,
    page: PageRequest,
  ): Promise<Page<StoredSmtpCredential>> {
    const query = this.dataSource.manager
      .createQueryBuilder(SmtpCredentialEntity, 'credential')
      .where('credential.accountId = :accountId', { accountId });
    if (granted !== undefined) {
      if (granted.length === 0) return { data: [], has_more: false };
      query.andWhere(WITHIN_GRANT, { granted: [...granted] });
    }
    const result = await keysetPage(query, 'credential', page);
    const domains = await this.domainsOf(result.data.map((credential) => credential.id));
    return {
      ...result,
      data: result.data.map((credential) => ({
        credential,
        domains: domains.get(credential.id) ?? [],
      })),
    };
  }

  async find(accountId: string, credentialId: string): Promise<StoredSmtpCredential | undefined> {
    const credential = await this.dataSource.manager.findOne(SmtpCredentialEntity, {
      where: { id: credentialId, accountId },
    });
    if (!credential) return undefined;
    const domains = await this.domainsOf([credential.id]);
    return { credential, domains: domains.get(credential.id) ?? [] };
  }

  /** Inserts the credential and its domain links in one transaction. */
  async insert(
    fields: Omit<SmtpCredentialEntity, 'seq' | 'createdAt' | 'updatedAt' | 'account'>,
    domains: readonly ResolvedDomain[],
  ): Promise<StoredSmtpCredential> {
    return this.dataSource.transaction(async (manager) => {
      await manager.insert(SmtpCredentialEntity, manager.create(SmtpCredentialEntity, fields));
      if (domains.length > 0) {
        await manager.insert(
          SmtpCredentialDomainEntity,
          domains.map((domain, position) => ({
            credentialId: fields.id,
            domain: domain.domain,
            domainId: domain.domain_id,
            position,
          })),
        );
      }
      const credential = await manager.findOneOrFail(SmtpCredentialEntity, {
        where: { id: fields.id },
      });
      return { credential, domains: domains.map((domain) => domain.domain) };
    });
  }

  /** Deletes the credential (its links go with it). */
  async delete(credentialId: string): Promise<boolean> {
    const result = await this.dataSource.manager.delete(SmtpCredentialEntity, { id: credentialId });
    return (result.affected ?? 0) > 0;
  }

  async findLogin(username: string): Promise<SmtpLoginRow | undefined> {
    const rows: SmtpLoginRow[] = await this.dataSource.query(LOGIN_SQL, [username]);
    return rows[0];
  }

  private async domainsOf(credentialIds: readonly string[]): Promise<Map<string, string[]>> {
    const byCredential = new Map<string, string[]>();
    if (credentialIds.length === 0) return byCredential;
    const links = await this.dataSource.manager.find(SmtpCredentialDomainEntity, {
      where: { credentialId: In([...credentialIds]) },
      order: { position: 'ASC' },
    });
    for (const link of links) {
      const list = byCredential.get(link.credentialId) ?? [];
      list.push(link.domain);
      byCredential.set(link.credentialId, list);
    }
    return byCredential;
  }
}
