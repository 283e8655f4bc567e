import type { ApiKeyPrincipal } from '@envoi/shared-edge';

/** The authenticated caller of a request. */
export type Principal = ApiKeyPrincipal;

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}
