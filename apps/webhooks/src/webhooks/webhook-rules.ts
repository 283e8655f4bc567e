import { isHostname, normalizeDomainName } from '@envoi/contracts-core';
import type { CreateWebhookBody, UpdateWebhookBody, WebhookScope } from '@envoi/contracts-webhooks';
import { checkOutboundUrl, type OutboundPolicy } from '@envoi/shared-outbound';

import { WebhooksException } from './webhooks.exception';

/**
 * A webhook URL at create and update: the outbound guard's save-time check (absolute, https —
 * http only when allowed —, no userinfo, an allowed port, no literal private or loopback host
 * unless an allowed CIDR covers it). The guard checks the resolved address again at connect time.
 */
export function checkWebhookUrl(raw: string, policy: OutboundPolicy): void {
  const check = checkOutboundUrl(raw, policy);
  if (!check.ok) throw WebhooksException.invalidUrl(check.reason.replace(/^url /, ''));
}

/** Normalised (lowercase, no trailing dot), de-duplicated, in the order given; 400 on a non-hostname. */
export function normalizeWebhookDomains(domains: readonly string[]): string[] {
  const normalized: string[] = [];
  for (const raw of domains) {
    const domain = normalizeDomainName(raw);
    if (!isHostname(domain)) throw WebhooksException.invalidDomain(raw);
    if (!normalized.includes(domain)) normalized.push(domain);
  }
  return normalized;
}

export interface WebhookTarget {
  scope: WebhookScope;
  /** Normalised; `[]` for a global webhook. */
  domains: string[];
}

/** The scope and domains of a new webhook: scoped needs domains, global ignores them. */
export function targetOfCreate(body: CreateWebhookBody): WebhookTarget {
  if (body.scope === 'global') return { scope: 'global', domains: [] };
  const domains = normalizeWebhookDomains(body.domains ?? []);
  if (domains.length === 0) throw WebhooksException.domainsRequired();
  return { scope: 'scoped', domains };
}

/**
 * The scope and domains after an update (platform notes 1.9): omitted keeps them, to global clears
 * the domains, global to scoped needs non-empty domains in the same request, `[]` clears them.
 */
export function targetOfUpdate(current: WebhookTarget, changes: UpdateWebhookBody): WebhookTarget {
  const scope = changes.scope ?? current.scope;
  if (scope === 'global') return { scope, domains: [] };
  if (changes.domains === undefined) {
    if (current.scope === 'global') throw WebhooksException.domainsRequired();
    return { scope, domains: current.domains };
  }
  const domains = normalizeWebhookDomains(changes.domains);
  if (current.scope === 'global' && domains.length === 0) throw WebhooksException.domainsRequired();
  return { scope, domains };
}

/**
 * A domain-scoped key (`granted`: its domains; undefined: every domain) may act on a webhook only
 * when it is scoped and every domain it is linked to is one of the key's.
 */
export function assertTargetGranted(
  target: WebhookTarget,
  granted: readonly string[] | undefined,
): void {
  if (granted === undefined) return;
  if (target.scope === 'global') throw WebhooksException.scopeNotGranted();
  if (!target.domains.every((domain) => granted.includes(domain))) {
    throw WebhooksException.scopeNotGranted();
  }
}
