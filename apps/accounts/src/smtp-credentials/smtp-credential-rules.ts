import type { CreateSmtpCredentialBody, SmtpCredentialScope } from '@envoi/contracts-accounts';
import { isHostname, normalizeDomainName } from '@envoi/contracts-core';

import { SmtpCredentialsException } from './smtp-credentials.exception';

export interface SmtpCredentialTarget {
  scope: SmtpCredentialScope;
  /** Normalised, de-duplicated, in the order given; `[]` for a global credential. */
  domains: string[];
}

/** The scope and domains of a new credential: scoped needs domains, global ignores them. */
export function targetOfCreate(body: CreateSmtpCredentialBody): SmtpCredentialTarget {
  if (body.scope === 'global') return { scope: 'global', domains: [] };
  const domains: string[] = [];
  for (const raw of body.domains ?? []) {
    const domain = normalizeDomainName(raw);
    if (!isHostname(domain)) throw SmtpCredentialsException.invalidDomain(raw);
    if (!domains.includes(domain)) domains.push(domain);
  }
  if (domains.length === 0) throw SmtpCredentialsException.domainsRequired();
  return { scope: 'scoped', domains };
}

/**
 * Whether a key restricted to `granted` domains (undefined: the `:all` scope) may see or act on a
 * credential linked to `linked`: it needs a domain in common, so a global credential (no domains)
 * is out of its reach (spec 4: read or delete of a linked domain).
 */
export function isWithinGrant(
  linked: readonly string[],
  granted: readonly string[] | undefined,
): boolean {
  if (granted === undefined) return true;
  return linked.some((domain) => granted.includes(domain));
}
