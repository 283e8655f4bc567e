import type { VerifiedApiKey } from '@envoi/contracts-accounts';
import { TtlCache } from '@envoi/shared-cache';

import type { ApiKeyPrincipal } from './api-key-principal';
import { hashApiKey } from './api-key-secret';
import type { CredentialVerifier } from './credential-verifier';

/** Asks the service that owns keys about a secret's hash: its key, or null when unknown. */
export type ApiKeyLookup = (
  secretHash: string,
  requestId: string,
) => Promise<VerifiedApiKey | null>;

export interface ApiKeyVerifierOptions {
  /** How long a valid key is trusted without asking again (0: never cached). */
  ttlMs: number;
  /** Unknown keys are remembered briefly so a flood of bad keys does not reach the owner. */
  negativeTtlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

const MAX_ENTRIES = 10_000;
const NEGATIVE_TTL_MS = 1_000;

/**
 * Verifies API keys through their owner and caches the answer briefly, by secret hash. `forget`
 * (on the owner's key-change broadcast) drops the key at once, `forgetAccount` (on an account's
 * status change) every key of the account; it also discards every lookup in
 * flight, whose key is not known yet, so an answer that predates a revocation is never cached.
 */
export class ApiKeyVerifier implements CredentialVerifier<string, ApiKeyPrincipal> {
  private readonly cache: TtlCache<ApiKeyPrincipal | null>;
  private readonly hashByKeyId = new Map<string, string>();
  private readonly hashesByAccountId = new Map<string, Set<string>>();
  private readonly lookingUp = new Set<string>();

  constructor(
    private readonly lookup: ApiKeyLookup,
    private readonly options: ApiKeyVerifierOptions,
  ) {
    this.cache = new TtlCache(options.maxEntries ?? MAX_ENTRIES, options.now);
  }

  /** The principal for a secret, or null when the key is unknown or deleted. */
  verify(secret: string, requestId: string): Promise<ApiKeyPrincipal | null> {
    const hash = hashApiKey(secret);
    return this.cache.get(
      hash,
      () => this.load(hash, requestId),
      (principal) =>
        principal ? this.options.ttlMs : (this.options.negativeTtlMs ?? NEGATIVE_TTL_MS),
    );
  }

  /** The key changed or was revoked: its next use asks the owner again. */
  forget(keyId: string): void {
    const hash = this.hashByKeyId.get(keyId);
    if (hash !== undefined) {
      this.cache.invalidate(hash);
      this.hashByKeyId.delete(keyId);
    }
    this.forgetLookupsInFlight();
  }

  /** The account changed status (suspended, deleted…): every key of it asks the owner again. */
  forgetAccount(accountId: string): void {
    for (const hash of this.hashesByAccountId.get(accountId) ?? []) this.cache.invalidate(hash);
    this.hashesByAccountId.delete(accountId);
    this.forgetLookupsInFlight();
  }

  private forgetLookupsInFlight(): void {
    for (const pending of this.lookingUp) this.cache.invalidate(pending);
  }

  private async load(hash: string, requestId: string): Promise<ApiKeyPrincipal | null> {
    this.lookingUp.add(hash);
    try {
      const key = await this.lookup(hash, requestId);
      if (key === null) return null;
      this.hashByKeyId.set(key.key_id, hash);
      const accountHashes = this.hashesByAccountId.get(key.account_id) ?? new Set<string>();
      this.hashesByAccountId.set(key.account_id, accountHashes.add(hash));
      return { ...key, scopeSet: new Set(key.scopes) };
    } finally {
      this.lookingUp.delete(hash);
    }
  }
}
