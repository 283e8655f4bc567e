import { isHostname, normalizeDomainName } from '@envoi/contracts-core';

import type { RecipientMatch } from './inbound';

/** A route's recipient pattern, parsed (platform notes 2.8). */
export interface RecipientPattern {
  /** The local-part pattern, lowercase: `""` or `*` for any, at most one `*` wildcard. */
  local: string;
  /** The domain a full pattern names (normalised); null: every domain of the account. */
  domain: string | null;
}

/** An address a mail is for, split and lowercased. */
export interface RecipientAddress {
  local: string;
  domain: string;
}

const LOCAL_PART_MAX = 64;
/** The dot-atom characters of RFC 5322 a local part may hold, without `%` and `!` (routing hacks). */
const LOCAL_CHARACTERS = /^[a-z0-9.#$&'+/=?^_`{|}~-]*$/;
const PATTERN_CHARACTERS = /^[a-z0-9.#$&'+/=?^_`{|}~*-]*$/;

function isDotAtom(local: string): boolean {
  return !local.startsWith('.') && !local.endsWith('.') && !local.includes('..');
}

/**
 * Parses a pattern: `""`, a local part (`support`), one `*` wildcard (`*`, `ticket-*`,
 * `*-support`), or either with a domain (`support@example.com`, `*@example.com`). Null when it
 * is none of these.
 */
export function parseRecipientPattern(raw: string): RecipientPattern | null {
  const pattern = raw.trim().toLowerCase();
  if (pattern === '') return { local: '', domain: null };
  const parts = pattern.split('@');
  if (parts.length > 2) return null;
  const [local, domainPart] = parts;
  if (local.length === 0 || local.length > LOCAL_PART_MAX) return null;
  if (!PATTERN_CHARACTERS.test(local) || !isDotAtom(local)) return null;
  if (local.split('*').length > 2) return null;
  if (domainPart === undefined) return { local, domain: null };
  const domain = normalizeDomainName(domainPart);
  if (!isHostname(domain)) return null;
  return { local, domain };
}

/** The pattern as stored and answered: lowercase, the domain normalised. */
export function formatRecipientPattern(pattern: RecipientPattern): string {
  return pattern.domain === null ? pattern.local : `${pattern.local}@${pattern.domain}`;
}

/**
 * Splits an RCPT address. Null for anything but a plain `local@domain` (items 41–42 of the
 * reliability plan): source routes (`@a:b@c`), `%` and `!` hacks, quoted local parts, several
 * `@`, a domain that is not a hostname.
 */
export function parseRecipientAddress(raw: string): RecipientAddress | null {
  const address = raw
    .trim()
    .replace(/^<(.*)>$/, '$1')
    .toLowerCase();
  const parts = address.split('@');
  if (parts.length !== 2) return null;
  const [local, domain] = parts;
  if (local.length === 0 || local.length > LOCAL_PART_MAX) return null;
  if (!LOCAL_CHARACTERS.test(local) || !isDotAtom(local)) return null;
  if (!isHostname(domain)) return null;
  return { local, domain };
}

/** Does the pattern take the address? The local part compares case-insensitively. */
export function patternMatches(pattern: RecipientPattern, address: RecipientAddress): boolean {
  if (pattern.domain !== null && pattern.domain !== address.domain) return false;
  return localPartMatches(pattern.local, address.local);
}

function localPartMatches(pattern: string, local: string): boolean {
  if (pattern === '' || pattern === '*') return true;
  const star = pattern.indexOf('*');
  if (star < 0) return pattern === local;
  const prefix = pattern.slice(0, star);
  const suffix = pattern.slice(star + 1);
  return (
    local.length >= prefix.length + suffix.length &&
    local.startsWith(prefix) &&
    local.endsWith(suffix)
  );
}

/**
 * The enabled routes that take mail for a domain: those of the first owning account (DNS-valid
 * first, then the oldest) that has any; `not_routed` when no owner has one. The MX keeps it per
 * domain and matches each RCPT address against it (matchRouteSet).
 */
export type DomainRouteSet =
  | {
      outcome: 'routed';
      account_id: string;
      domain: string;
      routes: Array<{ id: string; recipient: string }>;
    }
  | { outcome: 'not_routed' };

/** The RCPT answer for `address` from its domain's route set. */
export function matchRouteSet(set: DomainRouteSet, address: RecipientAddress): RecipientMatch {
  if (set.outcome === 'not_routed') return { outcome: 'not_routed' };
  const routeIds = set.routes
    .filter((route) => {
      const pattern = parseRecipientPattern(route.recipient);
      return pattern !== null && patternMatches(pattern, address);
    })
    .map((route) => route.id);
  if (routeIds.length === 0) return { outcome: 'unknown_recipient' };
  return { outcome: 'route', account_id: set.account_id, domain: set.domain, route_ids: routeIds };
}
