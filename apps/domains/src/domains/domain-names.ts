import { isDnsLabel, isHostname, normalizeDomainName } from '@envoi/contracts-core';

import { DomainsException } from './domains.exception';

/** The domain name as stored: normalised, and a hostname, else `domains.invalid_domain_name`. */
export function requireDomainName(raw: string): string {
  const name = normalizeDomainName(raw);
  if (!isHostname(name)) throw DomainsException.invalidName(raw);
  return name;
}

export const SUBDOMAIN_FIELDS = [
  'tracking_subdomain',
  'return_path_subdomain',
  'subscription_subdomain',
  'media_subdomain',
] as const;
export type SubdomainField = (typeof SUBDOMAIN_FIELDS)[number];

/**
 * A subdomain as stored: trimmed, lowercased, without a trailing dot, and relative to the domain
 * (`click.example.com` for `example.com` is taken as `click`). One or more DNS labels.
 */
export function normalizeSubdomain(field: SubdomainField, raw: string, domain: string): string {
  let value = normalizeDomainName(raw);
  if (value.endsWith(`.${domain}`)) value = value.slice(0, -domain.length - 1);
  const labels = value.split('.');
  if (value === '' || !labels.every(isDnsLabel) || !isHostname(`${value}.${domain}`)) {
    throw DomainsException.invalidSubdomain(`${field} must be a subdomain label such as "click"`);
  }
  return value;
}

const SELECTOR = /^(?!-)[a-z0-9-]{1,62}(?<!-)$/;

/** Null for empty or whitespace-only input (the default selector), else one DNS label. */
export function normalizeDkimSelector(raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined) return null;
  const value = raw.trim().toLowerCase();
  if (value === '') return null;
  if (!SELECTOR.test(value)) throw DomainsException.invalidSelector();
  return value;
}
