/** Wire records, exactly as the public API returns them (reference contract field names). */

export const DNS_RECORD_TYPES = ['TXT', 'CNAME', 'MX'] as const;
export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];

/** One record the customer publishes, with what the last check found. */
export interface DnsRecord {
  type: DnsRecordType;
  /** Human-readable name of the record's purpose (`SPF`, `DKIM`, …). */
  label: string | null;
  /** Fully qualified name the record is published at. */
  host: string;
  /** The record's value as it should be published (RDATA presentation form). */
  content: string;
  /** Whether the record must verify for `dns_valid`. */
  required: boolean;
  /** Whether the last check found it published correctly. */
  propagated: boolean;
}

export interface DomainRecord {
  object: 'domain';
  id: string;
  created_at: string;
  updated_at: string;
  domain: string;
  account_id: string;
  dns_records: DnsRecord[];
  last_dns_check_at: string | null;
  /** Every required record verified at the last check. */
  dns_valid: boolean;
  /** Null means the product default subdomain is used. */
  tracking_subdomain: string | null;
  return_path_subdomain: string | null;
  subscription_subdomain: string | null;
  media_subdomain: string | null;
  dkim_rotation_interval_days: number | null;
  /** The per-domain selector override only; null means the default selector. */
  dkim_selector: string | null;
  rotation_ready: boolean;
  dsn_recipient: string | null;
}

/**
 * The internal answer to "may this account send from this domain, and with which DKIM selector?".
 * Carries no key material: only delivery signs, and asks for the key itself (DkimSigningKey).
 */
export interface SenderAuthorization {
  domain_id: string;
  account_id: string;
  domain: string;
  /** Sending is allowed only while this holds (spec 4.2 rule 2). */
  dns_valid: boolean;
  dkim: {
    selector: string;
    algorithm: 'rsa-sha256';
  };
  /** `<return-path subdomain>.<domain>` once its CNAME verified; null: use the platform's own. */
  return_path_host: string | null;
  /** `<tracking subdomain>.<domain>` once its CNAME verified; null: use the platform's own. */
  tracking_host: string | null;
  /** Increases with every change of the domain; `domain.changed` events carry it too. */
  version: number;
  /** How long the answer may be cached; a `domains.domain.changed` event ends it sooner. */
  cache_ttl_ms: number;
}

/**
 * The DKIM key a sender domain signs with. Key material: it travels only on the internal bus, is
 * asked for by the delivery service alone, and never reaches the public API.
 */
export interface DkimSigningKey {
  domain_id: string;
  account_id: string;
  domain: string;
  selector: string;
  algorithm: 'rsa-sha256';
  /** PKCS#8 PEM. */
  private_key_pem: string;
  /** As SenderAuthorization.version: increases with every change of the domain. */
  version: number;
  /** How long the key may be cached; a `domains.domain.changed` event ends it sooner. */
  cache_ttl_ms: number;
}

export interface ResolvedDomain {
  domain: string;
  domain_id: string;
}

/** Whether a host is some domain's return-path host with its CNAME verified. */
export interface ReturnPathHostMatch {
  verified: boolean;
  /** How long the answer may be cached. */
  cache_ttl_ms: number;
}

export interface ResolvedDomains {
  /** The requested names the account owns, normalised, in request order, without duplicates. */
  found: ResolvedDomain[];
  /** The requested names (normalised) the account does not own, or that are not hostnames. */
  missing: string[];
}

/** An account that has a domain name, as the MX must know it (the same name may be in several). */
export interface DomainOwner {
  account_id: string;
  domain_id: string;
  dns_valid: boolean;
}

/** The accounts having a domain name: DNS-valid ones first, then the oldest. */
export interface DomainOwners {
  owners: DomainOwner[];
}

/** `data` of the `domain.dns_error` webhook (reference webhooks.yaml DomainWebhookData). */
export interface DomainDnsErrorData {
  domain: string;
  account_id: string;
  spf_valid: boolean;
  dkim_valid: boolean;
  dmarc_valid: boolean;
  dns_last_checked_at: string;
}

/** `data` of the durable `domain.deleted` event. */
export interface DomainDeletedData {
  domain_id: string;
  domain: string;
  account_id: string;
  deleted_at: string;
}

export interface DomainCounts {
  /** Every requested account id, with its number of domains (0 when it has none). */
  counts: Record<string, number>;
}
