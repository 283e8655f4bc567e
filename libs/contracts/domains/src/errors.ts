export enum DomainsErrorCode {
  /** No domain of that name in the account. */
  DomainNotFound = 'domains.domain_not_found',
  /** The account already has a domain of that name. */
  DomainAlreadyExists = 'domains.domain_already_exists',
  /** Not a fully qualified hostname (after normalisation). */
  InvalidDomainName = 'domains.invalid_domain_name',
  /** A subdomain that is not a hostname prefix, or two subdomains that collide. */
  InvalidSubdomain = 'domains.invalid_subdomain',
  /** The subdomain's DNS record has verified: it can no longer change. */
  SubdomainLocked = 'domains.subdomain_locked',
  /** A DKIM selector that is not one DNS label of 1–62 characters. */
  InvalidDkimSelector = 'domains.invalid_dkim_selector',
  /** DKIM has verified with the current selector: it can no longer change. */
  DkimSelectorLocked = 'domains.dkim_selector_locked',
  /** A supplied DKIM private key that is not an RSA key of 1024–4096 bits. */
  InvalidDkimPrivateKey = 'domains.invalid_dkim_private_key',
  /** The resolvers did not answer: nothing was learned, try again later. */
  DnsCheckUnavailable = 'domains.dns_check_unavailable',
}
