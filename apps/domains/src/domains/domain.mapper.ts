import type { DomainRecord } from '@envoi/contracts-domains';

import {
  DEFAULT_RETURN_PATH_SUBDOMAIN,
  DEFAULT_TRACKING_SUBDOMAIN,
  type DnsEndpoints,
  type ExpectedRecord,
  expectedRecords,
  isPropagated,
} from './dns-records';
import type { DomainEntity } from './domain.entity';

export function effectiveSelector(domain: DomainEntity): string {
  return domain.dkimSelector ?? domain.dkimDefaultSelector;
}

/** The records the domain publishes, as its settings are now. */
export function recordsOf(domain: DomainEntity, endpoints: DnsEndpoints): ExpectedRecord[] {
  return expectedRecords(
    {
      domain: domain.name,
      selector: effectiveSelector(domain),
      publicKey: domain.dkimPublicKey,
      trackingSubdomain: domain.trackingSubdomain ?? DEFAULT_TRACKING_SUBDOMAIN,
      returnPathSubdomain: domain.returnPathSubdomain ?? DEFAULT_RETURN_PATH_SUBDOMAIN,
      subscriptionSubdomain: domain.subscriptionSubdomain,
      mediaSubdomain: domain.mediaSubdomain,
    },
    endpoints,
  );
}

/** The public record: never the private key, nor internal columns. */
export function toDomainRecord(domain: DomainEntity, endpoints: DnsEndpoints): DomainRecord {
  return {
    object: 'domain',
    id: domain.id,
    created_at: domain.createdAt.toISOString(),
    updated_at: domain.updatedAt.toISOString(),
    domain: domain.name,
    account_id: domain.accountId,
    dns_records: recordsOf(domain, endpoints).map((record) => ({
      type: record.type,
      label: record.label,
      host: record.host,
      content: record.content,
      required: record.required,
      propagated: isPropagated(record, domain.dnsChecks),
    })),
    last_dns_check_at: domain.lastDnsCheckAt?.toISOString() ?? null,
    dns_valid: domain.dnsValid,
    tracking_subdomain: domain.trackingSubdomain,
    return_path_subdomain: domain.returnPathSubdomain,
    subscription_subdomain: domain.subscriptionSubdomain,
    media_subdomain: domain.mediaSubdomain,
    dkim_rotation_interval_days: domain.dkimRotationIntervalDays,
    dkim_selector: domain.dkimSelector,
    // Envoi keeps one DKIM key per domain (no managed rotation): there is no standby slot.
    rotation_ready: false,
    // No API sets a DSN recipient yet; the contract's field is always present.
    dsn_recipient: null,
  };
}
