import type { DnsRecordType } from '@envoi/contracts-domains';

/** The records a domain publishes, each identified by a stable key. */
export const RECORD_KEYS = [
  'spf',
  'dkim',
  'dmarc',
  'return_path',
  'tracking',
  'subscription',
  'media',
  'mx',
] as const;
export type RecordKey = (typeof RECORD_KEYS)[number];

/** How a record is verified against what DNS answers. */
export type Verification =
  | { kind: 'spf'; include: string }
  | { kind: 'dkim'; publicKey: string }
  | { kind: 'dmarc'; domain: string }
  | { kind: 'cname'; target: string }
  | { kind: 'mx'; exchange: string };

export interface ExpectedRecord {
  key: RecordKey;
  type: DnsRecordType;
  label: string;
  host: string;
  content: string;
  required: boolean;
  verification: Verification;
}

/** Envoi's own endpoints, from configuration. */
export interface DnsEndpoints {
  spfInclude: string;
  returnPathTarget: string;
  trackingTarget: string;
  inboundMxHost: string;
}

/** What of a domain decides its records. Subdomains are relative to the domain. */
export interface DomainDnsSettings {
  domain: string;
  selector: string;
  publicKey: string;
  trackingSubdomain: string;
  returnPathSubdomain: string;
  subscriptionSubdomain: string | null;
  mediaSubdomain: string | null;
}

export const DEFAULT_TRACKING_SUBDOMAIN = 'click';
export const DEFAULT_RETURN_PATH_SUBDOMAIN = 'bounces';
export const DMARC_RECORD = 'v=DMARC1; p=quarantine; sp=none; adkim=r; aspf=r;';
export const MX_PRIORITY = 10;

/**
 * The records to publish, in display order. SPF, DKIM and DMARC are required to send; the
 * return-path (bounces, SPF alignment), tracking, subscription and media CNAMEs and the inbound MX
 * (routes) are recommended or optional.
 */
export function expectedRecords(
  settings: DomainDnsSettings,
  endpoints: DnsEndpoints,
): ExpectedRecord[] {
  const { domain } = settings;
  const records: ExpectedRecord[] = [
    {
      key: 'spf',
      type: 'TXT',
      label: 'SPF',
      host: domain,
      content: `v=spf1 include:${endpoints.spfInclude} ~all`,
      required: true,
      verification: { kind: 'spf', include: endpoints.spfInclude },
    },
    {
      key: 'dkim',
      type: 'TXT',
      label: 'DKIM',
      host: `${settings.selector}._domainkey.${domain}`,
      content: `v=DKIM1; k=rsa; p=${settings.publicKey}`,
      required: true,
      verification: { kind: 'dkim', publicKey: settings.publicKey },
    },
    {
      key: 'dmarc',
      type: 'TXT',
      label: 'DMARC',
      host: `_dmarc.${domain}`,
      content: DMARC_RECORD,
      required: true,
      verification: { kind: 'dmarc', domain },
    },
    cname(
      'return_path',
      'Return-Path',
      settings.returnPathSubdomain,
      domain,
      endpoints.returnPathTarget,
    ),
    cname('tracking', 'Tracking', settings.trackingSubdomain, domain, endpoints.trackingTarget),
  ];
  if (settings.subscriptionSubdomain !== null) {
    records.push(
      cname(
        'subscription',
        'Subscription',
        settings.subscriptionSubdomain,
        domain,
        endpoints.trackingTarget,
      ),
    );
  }
  if (settings.mediaSubdomain !== null) {
    records.push(
      cname('media', 'Media', settings.mediaSubdomain, domain, endpoints.trackingTarget),
    );
  }
  records.push({
    key: 'mx',
    type: 'MX',
    label: 'Inbound MX',
    host: domain,
    content: `${MX_PRIORITY} ${endpoints.inboundMxHost}`,
    required: false,
    verification: { kind: 'mx', exchange: endpoints.inboundMxHost },
  });
  return records;
}

function cname(
  key: RecordKey,
  label: string,
  subdomain: string,
  domain: string,
  target: string,
): ExpectedRecord {
  return {
    key,
    type: 'CNAME',
    label,
    host: `${subdomain}.${domain}`,
    content: target,
    required: false,
    verification: { kind: 'cname', target },
  };
}

/** What the last check found for one record, tied to the host and content it checked. */
export interface RecordCheck {
  host: string;
  content: string;
  propagated: boolean;
}

export type RecordChecks = Partial<Record<RecordKey, RecordCheck>>;

/** Whether the record, as it is expected now, was found at the last check. */
export function isPropagated(record: ExpectedRecord, checks: RecordChecks): boolean {
  const check = checks[record.key];
  return (
    check !== undefined &&
    check.propagated &&
    check.host === record.host &&
    check.content === record.content
  );
}

/** Every required record found. */
export function isDnsValid(records: readonly ExpectedRecord[], checks: RecordChecks): boolean {
  return records.every((record) => !record.required || isPropagated(record, checks));
}
