import { randomBytes } from 'node:crypto';

import { AesGcmCipher, OpenedSecrets } from '@envoi/shared-secrets';

import type { RouteEntity } from './route.entity';

/** The platform's own prefix of route signing secrets (signed as UTF-8, whole, as webhooks). */
export const ROUTE_SECRET_PREFIX = 'envoi-rtsec-';
const ROUTE_SECRET_RANDOM_BYTES = 32;

/** A new signing secret: the prefix and 32 random bytes in base64url. */
export function generateRouteSecret(): string {
  return ROUTE_SECRET_PREFIX + randomBytes(ROUTE_SECRET_RANDOM_BYTES).toString('base64url');
}

/**
 * Seals route signing secrets at rest, each bound to its own route's row. A secret opened is kept
 * (OpenedSecrets), so that each call does not decrypt it again.
 */
export class RouteSecretCipher {
  private readonly cipher: AesGcmCipher;
  private readonly opened: OpenedSecrets;

  constructor(hexKey: string) {
    this.cipher = new AesGcmCipher(hexKey);
    this.opened = new OpenedSecrets((id, sealed) => this.cipher.openText(sealed, context(id)));
  }

  seal(secret: string, routeId: string): string {
    return this.cipher.sealText(secret, context(routeId));
  }

  open(route: Pick<RouteEntity, 'id' | 'secretCiphertext'>): string {
    return this.opened.open(route.id, route.secretCiphertext);
  }
}

function context(routeId: string): string {
  return `envoi.route-secret:${routeId}`;
}
