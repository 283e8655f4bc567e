import { randomBytes } from 'node:crypto';

import { AesGcmCipher } from '@envoi/shared-secrets';

import type { RouteEntity } from './route.entity';

/** The platform's own prefix of route signing secrets (signed as UTF-8, whole, as webhooks). */
export const ROUTE_SECRET_PREFIX = 'envoi-rtsec-';
const ROUTE_SECRET_RANDOM_BYTES = 32;

/** A new signing secret: the prefix and 32 random bytes in base64url. */
export function generateRouteSecret(): string {
  return ROUTE_SECRET_PREFIX + randomBytes(ROUTE_SECRET_RANDOM_BYTES).toString('base64url');
}

/** Opened secrets kept at most (all dropped when full): the routes called lately. */
const OPENED_SECRETS_MAX = 1000;

/**
 * Seals route signing secrets at rest, each bound to its own route's row. A secret opened is kept
 * by its sealed text (which a new secret replaces), so that each call does not decrypt it again.
 */
export class RouteSecretCipher {
  private readonly cipher: AesGcmCipher;
  private readonly opened = new Map<string, string>();

  constructor(hexKey: string) {
    this.cipher = new AesGcmCipher(hexKey);
  }

  seal(secret: string, routeId: string): string {
    return this.cipher.sealText(secret, context(routeId));
  }

  open(route: Pick<RouteEntity, 'id' | 'secretCiphertext'>): string {
    const key = `${route.id}/${route.secretCiphertext}`;
    const known = this.opened.get(key);
    if (known !== undefined) return known;
    const secret = this.cipher.openText(route.secretCiphertext, context(route.id));
    if (this.opened.size >= OPENED_SECRETS_MAX) this.opened.clear();
    this.opened.set(key, secret);
    return secret;
  }
}

function context(routeId: string): string {
  return `envoi.route-secret:${routeId}`;
}
