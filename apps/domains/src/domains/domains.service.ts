import { randomUUID } from 'node:crypto';

import type { MessageResponse, Page, PageRequest } from '@envoi/contracts-core';
import { normalizeDomainName } from '@envoi/contracts-core';
import { isHostname } from '@envoi/contracts-core';
import {
  type CreateDomainBody,
  type DkimSigningKey,
  type DomainCounts,
  type DomainOwners,
  type DomainRecord,
  DomainsStreamSubjects,
  type ResolvedDomains,
  type ReturnPathHostMatch,
  type SenderAuthorization,
  type UpdateDomainBody,
} from '@envoi/contracts-domains';
import { isUniqueViolation } from '@envoi/shared-database';
import { enqueueEvent, OutboxRelayService } from '@envoi/shared-outbox';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { DkimKeyCipher } from '../dkim/dkim-key-cipher';
import {
  type DkimKeyPair,
  generateDkimKeyPair,
  importDkimPrivateKey,
  InvalidDkimKeyError,
} from '../dkim/dkim-keys';
import { DnsCheckService } from '../dns-checks/dns-check.service';
import { DomainsConfig } from '../domains.config';
import {
  DEFAULT_RETURN_PATH_SUBDOMAIN,
  DEFAULT_TRACKING_SUBDOMAIN,
  type DnsEndpoints,
  isPropagated,
  type RecordKey,
} from './dns-records';
import type { DomainEntity } from './domain.entity';
import { effectiveSelector, recordsOf, toDomainRecord } from './domain.mapper';
import { DomainEvents } from './domain-events';
import {
  normalizeDkimSelector,
  normalizeSubdomain,
  requireDomainName,
  SUBDOMAIN_FIELDS,
  type SubdomainField,
} from './domain-names';
import { DNS_ENDPOINTS } from './domains.constants';
import { DomainsException } from './domains.exception';
import { DomainsRepository } from './domains.repository';

const SUBDOMAIN_COLUMNS = {
  tracking_subdomain: {
    value: 'trackingSubdomain',
    locked: 'trackingLocked',
    fallback: DEFAULT_TRACKING_SUBDOMAIN,
  },
  return_path_subdomain: {
    value: 'returnPathSubdomain',
    locked: 'returnPathLocked',
    fallback: DEFAULT_RETURN_PATH_SUBDOMAIN,
  },
  subscription_subdomain: {
    value: 'subscriptionSubdomain',
    locked: 'subscriptionLocked',
    fallback: null,
  },
  media_subdomain: { value: 'mediaSubdomain', locked: 'mediaLocked', fallback: null },
} as const satisfies Record<
  SubdomainField,
  { value: keyof DomainEntity; locked: keyof DomainEntity; fallback: string | null }
>;

/** The effective subdomains of a domain must differ: two CNAMEs cannot share a name. */
function assertDistinctSubdomains(domain: DomainEntity): void {
  const seen = new Map<string, SubdomainField>();
  for (const field of SUBDOMAIN_FIELDS) {
    const column = SUBDOMAIN_COLUMNS[field];
    const effective = domain[column.value] ?? column.fallback;
    if (effective === null) continue;
    const clash = seen.get(effective);
    if (clash) throw DomainsException.invalidSubdomain(`${clash} and ${field} must differ`);
    seen.set(effective, field);
  }
}

/** The verified host of a record, or null. */
export function verifiedHost(
  domain: DomainEntity,
  endpoints: DnsEndpoints,
  key: RecordKey,
): string | null {
  const record = recordsOf(domain, endpoints).find((candidate) => candidate.key === key);
  return record && isPropagated(record, domain.dnsChecks) ? record.host : null;
}

@Injectable()
export class DomainsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: DomainsConfig,
    @Inject(DNS_ENDPOINTS) private readonly endpoints: DnsEndpoints,
    private readonly cipher: DkimKeyCipher,
    private readonly checks: DnsCheckService,
    private readonly events: DomainEvents,
    private readonly outbox: OutboxRelayService,
    private readonly domains: DomainsRepository,
  ) {}

  async list(
    accountId: string,
    dnsValid: boolean | null | undefined,
    page: PageRequest,
  ): Promise<Page<DomainRecord>> {
    const result = await this.domains.page(accountId, dnsValid ?? undefined, page);
    return { ...result, data: result.data.map((domain) => this.toRecord(domain)) };
  }

  async create(accountId: string, body: CreateDomainBody): Promise<DomainRecord> {
    const name = requireDomainName(body.domain);
    const domain = this.domains.create({
      id: randomUUID(),
      accountId,
      name,
      version: 1,
      trackingSubdomain: optionalSubdomain('tracking_subdomain', body.tracking_subdomain, name),
      returnPathSubdomain: optionalSubdomain(
        'return_path_subdomain',
        body.return_path_subdomain,
        name,
      ),
      subscriptionSubdomain: optionalSubdomain(
        'subscription_subdomain',
        body.subscription_subdomain,
        name,
      ),
      mediaSubdomain: optionalSubdomain('media_subdomain', body.media_subdomain, name),
      dkimRotationIntervalDays: body.dkim_rotation_interval_days ?? null,
      dkimSelector: normalizeDkimSelector(body.dkim_selector),
      dkimDefaultSelector: this.config.DKIM_DEFAULT_SELECTOR,
      dnsValid: false,
      lastDnsCheckAt: null,
      dnsChecks: {},
      nextCheckAt: this.checks.nextCheckAt(new Date()),
      trackingLocked: false,
      returnPathLocked: false,
      subscriptionLocked: false,
      mediaLocked: false,
      dkimSelectorLocked: false,
    });
    assertDistinctSubdomains(domain);
    // Cheap early answer for the common duplicate; the unique index settles races.
    if (await this.domains.existsByName(accountId, name)) {
      throw DomainsException.alreadyExists();
    }
    const keys = await this.dkimKeys(body.dkim_private_key);
    domain.dkimPublicKey = keys.publicKey;
    domain.dkimPrivateKeySealed = this.cipher.seal(keys.privateKeyPem, domain.id);
    try {
      await this.domains.insert(domain);
    } catch (error) {
      if (isUniqueViolation(error, 'domains_account_id_name_key')) {
        throw DomainsException.alreadyExists();
      }
      throw error;
    }
    return this.toRecord(await this.find(accountId, name));
  }

  async get(accountId: string, rawName: string): Promise<DomainRecord> {
    return this.toRecord(await this.find(accountId, requireDomainName(rawName)));
  }

  /** Omitted or null fields stay unchanged; a locked subdomain or selector cannot change. */
  async update(
    accountId: string,
    rawName: string,
    changes: UpdateDomainBody,
  ): Promise<DomainRecord> {
    const name = requireDomainName(rawName);
    let changedAuthorization = false;
    const updated = await this.dataSource.transaction(async (manager) => {
      const domain = await this.lock(accountId, name, manager);
      const before = this.authorizationFingerprint(domain);
      let changed = false;
      for (const field of SUBDOMAIN_FIELDS) {
        const raw = changes[field];
        if (raw === undefined || raw === null) continue;
        const column = SUBDOMAIN_COLUMNS[field];
        const next = normalizeSubdomain(field, raw, name);
        const current = domain[column.value];
        if (next === current) continue;
        if (domain[column.locked] && next !== (current ?? column.fallback)) {
          throw DomainsException.subdomainLocked(field);
        }
        domain[column.value] = next;
        changed = true;
      }
      if (changes.dkim_selector !== undefined && changes.dkim_selector !== null) {
        const next = normalizeDkimSelector(changes.dkim_selector);
        if (next !== domain.dkimSelector) {
          const effectiveNext = next ?? domain.dkimDefaultSelector;
          if (domain.dkimSelectorLocked && effectiveNext !== effectiveSelector(domain)) {
            throw DomainsException.selectorLocked();
          }
          domain.dkimSelector = next;
          changed = true;
        }
      }
      const interval = changes.dkim_rotation_interval_days;
      if (
        interval !== undefined &&
        interval !== null &&
        interval !== domain.dkimRotationIntervalDays
      ) {
        domain.dkimRotationIntervalDays = interval;
        changed = true;
      }
      if (!changed) return domain;
      assertDistinctSubdomains(domain);
      changedAuthorization = this.authorizationFingerprint(domain) !== before;
      if (changedAuthorization) domain.version += 1;
      await this.domains.updateSettings(domain, manager);
      return this.find(accountId, name, manager);
    });
    if (changedAuthorization) this.events.changed(updated, 'updated');
    return this.toRecord(updated);
  }

  /** Deletes the domain and its key; announces it (durably, so key scopes naming it go too). */
  async delete(accountId: string, rawName: string): Promise<MessageResponse> {
    const name = requireDomainName(rawName);
    const deletedAt = new Date();
    const domain = await this.dataSource.transaction(async (manager) => {
      const found = await this.lock(accountId, name, manager);
      await this.domains.delete(found.id, manager);
      await enqueueEvent(manager, DomainsStreamSubjects.deleted, {
        id: randomUUID(),
        type: 'domain.deleted',
        timestamp: deletedAt.toISOString(),
        data: {
          domain_id: found.id,
          domain: found.name,
          account_id: found.accountId,
          deleted_at: deletedAt.toISOString(),
        },
      });
      return found;
    });
    this.outbox.notify();
    domain.version += 1;
    this.events.changed(domain, 'deleted');
    this.events.deleted(domain, deletedAt);
    return { message: `domain ${domain.name} deleted successfully` };
  }

  /** Checks the DNS now, unless the last check is recent enough to answer. */
  async checkDns(accountId: string, rawName: string): Promise<DomainRecord> {
    const name = requireDomainName(rawName);
    const domain = await this.find(accountId, name);
    const last = domain.lastDnsCheckAt?.getTime();
    if (last !== undefined && Date.now() - last < this.config.DNS_CHECK_CACHE_MS) {
      return this.toRecord(domain);
    }
    const checked = await this.checks.check(domain, 'manual');
    if (!checked) throw DomainsException.notFound();
    return this.toRecord(checked);
  }

  async authorizeSender(accountId: string, rawName: string): Promise<SenderAuthorization> {
    const domain = await this.findSender(accountId, rawName);
    return {
      domain_id: domain.id,
      account_id: domain.accountId,
      domain: domain.name,
      dns_valid: domain.dnsValid,
      dkim: { selector: effectiveSelector(domain), algorithm: 'rsa-sha256' },
      return_path_host: verifiedHost(domain, this.endpoints, 'return_path'),
      tracking_host: verifiedHost(domain, this.endpoints, 'tracking'),
      version: domain.version,
      cache_ttl_ms: this.config.SENDER_CACHE_TTL_MS,
    };
  }

  async dkimSigningKey(accountId: string, rawName: string): Promise<DkimSigningKey> {
    const domain = await this.findSender(accountId, rawName);
    return {
      domain_id: domain.id,
      account_id: domain.accountId,
      domain: domain.name,
      selector: effectiveSelector(domain),
      algorithm: 'rsa-sha256',
      private_key_pem: this.cipher.open(domain.dkimPrivateKeySealed, domain.id),
      version: domain.version,
      cache_ttl_ms: this.config.SENDER_CACHE_TTL_MS,
    };
  }

  async count(accountIds: readonly string[]): Promise<DomainCounts> {
    const found = await this.domains.countByAccount(accountIds);
    return { counts: Object.fromEntries(accountIds.map((id) => [id, found.get(id) ?? 0])) };
  }

  async resolve(accountId: string, rawNames: readonly string[]): Promise<ResolvedDomains> {
    const names = [...new Set(rawNames.map(normalizeDomainName))];
    const valid = names.filter(isHostname);
    const rows = await this.domains.idsByName(accountId, valid);
    const ids = new Map(rows.map((row) => [row.name, row.id]));
    const found: ResolvedDomains['found'] = [];
    const missing: string[] = [];
    for (const name of names) {
      const id = ids.get(name);
      if (id === undefined) missing.push(name);
      else found.push({ domain: name, domain_id: id });
    }
    return { found, missing };
  }

  /**
   * Whether `rawHost` is `<return-path subdomain>.<domain>` of some domain (of any account) whose
   * return-path CNAME is verified: the MX then takes VERP bounces addressed to it.
   */
  async matchReturnPathHost(rawHost: string): Promise<ReturnPathHostMatch> {
    const host = normalizeDomainName(rawHost);
    const cacheTtlMs = this.config.SENDER_CACHE_TTL_MS;
    if (!isHostname(host)) return { verified: false, cache_ttl_ms: cacheTtlMs };
    const labels = host.split('.');
    const parents = labels.slice(1, -1).map((_label, index) => labels.slice(index + 1).join('.'));
    const candidates = await this.domains.findByNames(parents.filter(isHostname));
    const verified = candidates.some(
      (domain) => verifiedHost(domain, this.endpoints, 'return_path') === host,
    );
    return { verified, cache_ttl_ms: cacheTtlMs };
  }

  /** The accounts having the name (none for a non-hostname): DNS-valid ones first, then the oldest. */
  async findOwners(rawName: string): Promise<DomainOwners> {
    const name = normalizeDomainName(rawName);
    if (!isHostname(name)) return { owners: [] };
    const rows = await this.domains.ownersByName(name);
    return {
      owners: rows.map((row) => ({
        account_id: row.accountId,
        domain_id: row.id,
        dns_valid: row.dnsValid,
      })),
    };
  }

  /** A sender domain by the name a From address carries; not found unless the account owns it. */
  private async findSender(accountId: string, rawName: string): Promise<DomainEntity> {
    const name = normalizeDomainName(rawName);
    if (!isHostname(name)) throw DomainsException.notFound();
    return this.find(accountId, name);
  }

  private toRecord(domain: DomainEntity): DomainRecord {
    return toDomainRecord(domain, this.endpoints);
  }

  /** What a sender authorization depends on, beyond dns_valid (which checks change). */
  private authorizationFingerprint(domain: DomainEntity): string {
    return [
      domain.dnsValid,
      effectiveSelector(domain),
      verifiedHost(domain, this.endpoints, 'return_path'),
      verifiedHost(domain, this.endpoints, 'tracking'),
    ].join('|');
  }

  private async dkimKeys(privateKeyPem: string | undefined): Promise<DkimKeyPair> {
    if (privateKeyPem === undefined || privateKeyPem.trim() === '') return generateDkimKeyPair();
    try {
      return importDkimPrivateKey(privateKeyPem);
    } catch (error) {
      if (error instanceof InvalidDkimKeyError)
        throw DomainsException.invalidPrivateKey(error.message);
      throw error;
    }
  }

  private async find(
    accountId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<DomainEntity> {
    const domain = await this.domains.findByName(accountId, name, manager);
    if (!domain) throw DomainsException.notFound();
    return domain;
  }

  private async lock(
    accountId: string,
    name: string,
    manager: EntityManager,
  ): Promise<DomainEntity> {
    const domain = await this.domains.lockByName(accountId, name, manager);
    if (!domain) throw DomainsException.notFound();
    return domain;
  }
}

function optionalSubdomain(
  field: SubdomainField,
  raw: string | undefined,
  domain: string,
): string | null {
  return raw === undefined ? null : normalizeSubdomain(field, raw, domain);
}
