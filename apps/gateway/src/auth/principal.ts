import type { VerifiedApiKey } from '@envoi/contracts-accounts';

/** The authenticated caller of a request. */
export interface Principal extends VerifiedApiKey {
  scopeSet: ReadonlySet<string>;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}
