import type { VerifiedApiKey } from '@envoi/contracts-accounts';

/** Whoever presents a valid API key: the key, its account and its scopes as a set. */
export interface ApiKeyPrincipal extends VerifiedApiKey {
  scopeSet: ReadonlySet<string>;
}
