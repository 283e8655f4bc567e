import { parseRecipientPattern, type RecipientPattern } from '@envoi/contracts-routes';
import { checkOutboundUrl, type OutboundPolicy } from '@envoi/shared-outbound';

import { RoutesException } from './routes.exception';

/**
 * A route URL at create and update: the outbound guard's save-time check, as for webhooks; the
 * guard checks the resolved address again at connect time.
 */
export function checkRouteUrl(raw: string, policy: OutboundPolicy): void {
  const check = checkOutboundUrl(raw, policy);
  if (!check.ok) throw RoutesException.invalidUrl(check.reason.replace(/^url /, ''));
}

/** The pattern of a body, or 400 naming it. */
export function requirePattern(raw: string): RecipientPattern {
  const pattern = parseRecipientPattern(raw);
  if (!pattern) throw RoutesException.invalidRecipient(raw);
  return pattern;
}

/**
 * A domain-scoped key (`granted`: its domains; undefined: every domain) may act on a route only
 * when its pattern names one of the key's domains: a pattern without a domain covers them all.
 */
export function assertDomainGranted(
  domain: string | null,
  granted: readonly string[] | undefined,
): void {
  if (granted === undefined) return;
  if (domain === null || !granted.includes(domain)) throw RoutesException.scopeNotGranted();
}
