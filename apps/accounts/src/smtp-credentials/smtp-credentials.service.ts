import { randomUUID } from 'node:crypto';

import type {
  CreatedSmtpCredentialRecord,
  CreateSmtpCredentialBody,
  SmtpCredentialRecord,
} from '@envoi/contracts-accounts';
import type { MessageResponse, Page, PageRequest } from '@envoi/contracts-core';
import { DomainsSubjects, type ResolvedDomain } from '@envoi/contracts-domains';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { AccountsConfig } from '../accounts.config';
import { toCreatedSmtpCredentialRecord, toSmtpCredentialRecord } from './smtp-credential.mapper';
import { SmtpCredentialEvents } from './smtp-credential-events';
import { isWithinGrant, targetOfCreate } from './smtp-credential-rules';
import { SmtpCredentialsException } from './smtp-credentials.exception';
import {
  SmtpCredentialsRepository,
  type StoredSmtpCredential,
} from './smtp-credentials.repository';
import { generateSmtpPassword, generateSmtpUsername, hashSmtpPassword } from './smtp-password';
import { SmtpPasswordCipher } from './smtp-password-cipher';

/**
 * The SMTP credentials API (platform notes 1.10). `granted`: the domains a domain-scoped key holds
 * the route's scope for (undefined: every domain); it reaches only credentials linked to one of
 * them, the others are not found. The gateway checks the create rules (spec 4) before asking.
 */
@Injectable()
export class SmtpCredentialsService {
  constructor(
    private readonly credentials: SmtpCredentialsRepository,
    private readonly passwords: SmtpPasswordCipher,
    private readonly events: SmtpCredentialEvents,
    private readonly rpc: RpcClient,
    private readonly config: AccountsConfig,
  ) {}

  async list(
    accountId: string,
    granted: readonly string[] | undefined,
    page: PageRequest,
  ): Promise<Page<SmtpCredentialRecord>> {
    const result = await this.credentials.page(accountId, granted, page);
    return { ...result, data: result.data.map(toSmtpCredentialRecord) };
  }

  async create(
    accountId: string,
    body: CreateSmtpCredentialBody,
  ): Promise<CreatedSmtpCredentialRecord> {
    const target = targetOfCreate(body);
    const domains = await this.resolveOwned(accountId, target.domains);
    const id = randomUUID();
    const password = generateSmtpPassword();
    const stored = await this.credentials.insert(
      {
        id,
        accountId,
        name: body.name,
        username: generateSmtpUsername(),
        sandbox: body.sandbox ?? false,
        scope: target.scope,
        passwordHash: await hashSmtpPassword(password),
        passwordCiphertext: this.passwords.seal(password, id),
      },
      domains,
    );
    this.events.changed(stored.credential);
    return toCreatedSmtpCredentialRecord(stored, password);
  }

  async get(
    accountId: string,
    credentialId: string,
    granted: readonly string[] | undefined,
  ): Promise<SmtpCredentialRecord> {
    return toSmtpCredentialRecord(await this.findGranted(accountId, credentialId, granted));
  }

  /** Takes effect at once: verification reads the table, and the smtp replicas are told. */
  async delete(
    accountId: string,
    credentialId: string,
    granted: readonly string[] | undefined,
  ): Promise<MessageResponse> {
    const { credential } = await this.findGranted(accountId, credentialId, granted);
    if (!(await this.credentials.delete(credential.id))) throw SmtpCredentialsException.notFound();
    this.events.changed(credential);
    return { message: 'smtp credential deleted' };
  }

  private async findGranted(
    accountId: string,
    credentialId: string,
    granted: readonly string[] | undefined,
  ): Promise<StoredSmtpCredential> {
    const found = await this.credentials.find(accountId, credentialId);
    if (!found || !isWithinGrant(found.domains, granted)) {
      throw SmtpCredentialsException.notFound();
    }
    return found;
  }

  /** The ids of the domains, in the order given; 400 naming the first the account does not own. */
  private async resolveOwned(accountId: string, domains: string[]): Promise<ResolvedDomain[]> {
    if (domains.length === 0) return [];
    const { found, missing } = await this.rpc.request(
      DomainsSubjects.resolveDomains,
      { account_id: accountId, domains },
      { timeoutMs: this.config.DOMAINS_RPC_TIMEOUT_MS },
    );
    const [first] = missing;
    if (first !== undefined) throw SmtpCredentialsException.domainNotOwned(first);
    return found;
  }
}
