import {
  AccountsSubjects,
  type CreatedSmtpCredentialRecord,
  CreateSmtpCredentialBody,
  type SmtpCredentialRecord,
} from '@envoi/contracts-accounts';
import {
  type MessageResponse,
  normalizeDomainName,
  type PaginatedList,
} from '@envoi/contracts-core';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';

import {
  DOMAIN_FROM_RESOURCE,
  type DomainScope,
  RequireScopes,
  ResourceDomains,
} from '../auth/scope-policy';
import { ApiError, AUTH_MESSAGES } from '../errors/api-error';
import { Idempotent } from '../http/edge-route';
import { BodyPipe, Ctx, type RequestContext, UuidParam } from '../http/request-context';
import { CursorCodec } from '../pagination/cursor-codec';
import { readPageRequest, toPaginatedList } from '../pagination/list-query';

const LIST = 'smtp-credentials';

/**
 * Spec 4: a global credential needs `smtp-credentials:write:all`, a scoped one the write scope of
 * every domain it lists.
 */
export function assertCreateGranted(body: CreateSmtpCredentialBody, scope: DomainScope): void {
  const granted =
    body.scope === 'global'
      ? scope.domains === undefined
      : (body.domains ?? []).every((domain) => scope.allows(normalizeDomainName(domain)));
  if (!granted) throw new ApiError(403, AUTH_MESSAGES.insufficientScope);
}

/**
 * SMTP credentials (platform notes 1.10; no update). A domain-scoped key sees, reads and deletes
 * only credentials linked to one of its domains (the others are 404).
 */
@Controller('v2/accounts/:account_id/smtp-credentials')
export class SmtpCredentialsController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cursors: CursorCodec,
  ) {}

  @Get()
  @RequireScopes(['smtp-credentials:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  async list(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Query() query: Record<string, string | string[] | undefined>,
  ): Promise<PaginatedList<SmtpCredentialRecord>> {
    const accountId = ctx.principal.account_id;
    const page = readPageRequest(query, this.cursors, accountId, LIST);
    const result = await this.rpc.request(
      AccountsSubjects.listSmtpCredentials,
      { account_id: accountId, page, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
    return toPaginatedList(result, this.cursors, accountId, LIST);
  }

  /** The 201 is the only response with the password; an Idempotency-Key replays it. */
  @Post()
  @HttpCode(201)
  @Idempotent('secret')
  @RequireScopes(['smtp-credentials:write:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  create(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Body(new BodyPipe(CreateSmtpCredentialBody)) body: CreateSmtpCredentialBody,
  ): Promise<CreatedSmtpCredentialRecord> {
    assertCreateGranted(body, scope);
    return this.rpc.request(
      AccountsSubjects.createSmtpCredential,
      { account_id: ctx.principal.account_id, credential: body },
      { requestId: ctx.requestId },
    );
  }

  @Get(':credential_id')
  @RequireScopes(['smtp-credentials:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  get(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('credential_id', new UuidParam('credential_id')) credentialId: string,
  ): Promise<SmtpCredentialRecord> {
    return this.rpc.request(
      AccountsSubjects.getSmtpCredential,
      { account_id: ctx.principal.account_id, credential_id: credentialId, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
  }

  @Delete(':credential_id')
  @RequireScopes(['smtp-credentials:delete:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  remove(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('credential_id', new UuidParam('credential_id')) credentialId: string,
  ): Promise<MessageResponse> {
    return this.rpc.request(
      AccountsSubjects.deleteSmtpCredential,
      { account_id: ctx.principal.account_id, credential_id: credentialId, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
  }
}
