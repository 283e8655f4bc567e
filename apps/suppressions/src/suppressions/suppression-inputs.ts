import { isHostname, normalizeDomainName } from '@envoi/contracts-core';
import {
  isSuppressibleEmail,
  normalizeEmail,
  parseRfc3339,
  type SuppressionFilters,
} from '@envoi/contracts-suppressions';

import { SuppressionsException } from './suppressions.exception';

/** The address as stored: normalised, and an email address, else `suppressions.invalid_email`. */
export function requireEmail(raw: string, field = 'email'): string {
  const email = normalizeEmail(raw);
  if (!isSuppressibleEmail(email)) throw SuppressionsException.invalidEmail(field);
  return email;
}

/** The domain as stored: normalised, and a hostname, else `suppressions.invalid_domain`. */
export function requireDomain(raw: string, field = 'domain'): string {
  const name = normalizeDomainName(raw);
  if (!isHostname(name)) throw SuppressionsException.invalidDomain(field);
  return name;
}

/** Omitted or null: every domain. */
export function optionalDomain(raw: string | null | undefined): string | null {
  return raw === undefined || raw === null ? null : requireDomain(raw);
}

/** An RFC 3339 instant the contract class has already checked. */
export function instant(value: string): Date {
  const date = parseRfc3339(value);
  if (!date) throw new Error(`not an RFC 3339 date-time: ${value}`);
  return date;
}

export interface ListCriteria {
  email?: string;
  domain?: string;
  from?: Date;
  to?: Date;
}

/** The list filters, normalised and checked. */
export function listCriteria(filters: SuppressionFilters | undefined): ListCriteria {
  const criteria: ListCriteria = {};
  if (!filters) return criteria;
  if (filters.email !== undefined) criteria.email = requireEmail(filters.email);
  if (filters.domain !== undefined) criteria.domain = requireDomain(filters.domain);
  if (filters.from_time !== undefined) criteria.from = instant(filters.from_time);
  if (filters.to_time !== undefined) criteria.to = instant(filters.to_time);
  if (criteria.from && criteria.to && criteria.from > criteria.to) {
    throw SuppressionsException.invalidTimeRange();
  }
  return criteria;
}
