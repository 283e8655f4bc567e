import { allowsClientIp, API_KEY_PATTERN, bearerToken } from '@envoi/shared-edge';
import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { ApiError, AUTH_MESSAGES } from '../errors/api-error';
import { edgeRouteConfig } from '../http/edge-route';
import { UUID_PATTERN } from '../http/request-context';
import { headerCount } from '../http/request-headers';
import { ApiKeyCredentials } from './api-key-credentials.service';
import { KeyUsageRecorder } from './key-usage-recorder.service';
import type { Principal } from './principal';

/**
 * v2: 401 with a Bearer challenge. v1: 403, the only credential failure its contract declares
 * (openapi-v1 `AccessDeniedResponse`; the spec names no status).
 */
function unauthorized(v1: boolean, message: string): ApiError {
  return v1
    ? new ApiError(403, message)
    : new ApiError(401, message, { 'www-authenticate': 'Bearer' });
}

/**
 * Authenticates every routed request before its body is read: credentials, then the key's IP
 * allow list, then the account in the path. Runs as a Fastify onRequest hook, so nothing of an
 * unauthenticated request is parsed and these failures precede idempotency and validation.
 */
@Injectable()
export class Authenticator {
  constructor(
    private readonly verifier: ApiKeyCredentials,
    private readonly usage: KeyUsageRecorder,
  ) {}

  async onRequest(request: FastifyRequest): Promise<void> {
    if (request.routeOptions.url === undefined) return; // unknown route: 404 follows
    if (edgeRouteConfig(request).public) return;
    const v1 = request.url.startsWith('/v1/');
    const principal = await this.verify(request, v1);
    if (!allowsClientIp(principal, request.ip)) {
      throw new ApiError(403, AUTH_MESSAGES.ipNotAllowed);
    }
    this.checkAccountPath(request, principal, v1);
    this.usage.record(principal.key_id);
    request.principal = principal;
  }

  private async verify(request: FastifyRequest, v1: boolean): Promise<Principal> {
    const headerName = v1 ? 'x-api-key' : 'authorization';
    // Node keeps only the first Authorization and joins repeated X-Api-Key values: count them raw.
    if (headerCount(request.raw.rawHeaders, headerName) > 1) {
      throw new ApiError(400, `the ${headerName} header must be given only once`);
    }
    const header = request.headers[headerName];
    const secret = v1 ? (typeof header === 'string' ? header.trim() : null) : bearerToken(header);
    if (!secret) {
      throw unauthorized(v1, v1 ? AUTH_MESSAGES.v1InvalidCredentials : AUTH_MESSAGES.missingBearer);
    }
    return this.verifySecret(secret, v1, request.id);
  }

  private async verifySecret(secret: string, v1: boolean, requestId: string): Promise<Principal> {
    const invalid = v1 ? AUTH_MESSAGES.v1InvalidCredentials : AUTH_MESSAGES.invalidKey;
    if (!API_KEY_PATTERN.test(secret)) throw unauthorized(v1, invalid);
    const principal = await this.verifier.verify(secret, requestId);
    if (!principal) throw unauthorized(v1, invalid);
    if (principal.account_status !== 'active') {
      throw unauthorized(v1, AUTH_MESSAGES.accountSuspended);
    }
    return principal;
  }

  /**
   * A v2 key given outside the Authorization header (the webhook stream's `api_secret_key`), with
   * the same checks as a routed request: the key, its IP allow list, the account in the path.
   */
  async authenticateKey(
    secret: string | null,
    clientIp: string,
    accountId: string,
    requestId: string,
  ): Promise<Principal> {
    if (!secret) throw unauthorized(false, AUTH_MESSAGES.invalidKey);
    const principal = await this.verifySecret(secret, false, requestId);
    if (!allowsClientIp(principal, clientIp)) throw new ApiError(403, AUTH_MESSAGES.ipNotAllowed);
    if (accountId.toLowerCase() !== principal.account_id) {
      throw unauthorized(false, AUTH_MESSAGES.wrongAccount);
    }
    this.usage.record(principal.key_id);
    return principal;
  }

  private checkAccountPath(request: FastifyRequest, principal: Principal, v1: boolean): void {
    const accountId = (request.params as Record<string, string | undefined> | undefined)?.[
      'account_id'
    ];
    if (accountId === undefined) return;
    if (!UUID_PATTERN.test(accountId)) throw new ApiError(400, 'invalid account_id');
    if (accountId.toLowerCase() !== principal.account_id) {
      throw unauthorized(v1, AUTH_MESSAGES.wrongAccount);
    }
  }
}
