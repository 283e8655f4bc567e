import type { MessageResponse, PaginatedList } from '@envoi/contracts-core';
import { normalizeDomainName } from '@envoi/contracts-core';
import {
  CreateDomainBody,
  type DomainRecord,
  DomainsSubjects,
  UpdateDomainBody,
} from '@envoi/contracts-domains';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';

import { domainFromParam, RequireScopes } from '../auth/scope-policy';
import { ApiError } from '../errors/api-error';
import { Idempotent } from '../http/edge-route';
import { BodyPipe, Ctx, type RequestContext } from '../http/request-context';
import { CursorCodec } from '../pagination/cursor-codec';
import { readPageRequest, toPaginatedList } from '../pagination/list-query';

const LIST = 'domains';
const DOMAIN_NAME_MAX = 253;

/** The `{domain}` path segment: a name, normalised the way the domains service stores names. */
function domainParam(raw: string): string {
  const name = normalizeDomainName(raw);
  if (name.length === 0 || name.length > DOMAIN_NAME_MAX) throw new ApiError(400, 'invalid domain');
  return name;
}

/** `dns_valid=true|false`; anything else is a 400 rather than silently ignored. */
function dnsValidFilter(value: string | string[] | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new ApiError(400, 'dns_valid must be true or false');
}

@Controller('v2/accounts/:account_id/domains')
export class DomainsController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cursors: CursorCodec,
  ) {}

  @Get()
  @RequireScopes(['domains:read'])
  async list(
    @Ctx() ctx: RequestContext,
    @Query() query: Record<string, string | string[] | undefined>,
  ): Promise<PaginatedList<DomainRecord>> {
    const accountId = ctx.principal.account_id;
    const page = readPageRequest(query, this.cursors, accountId, LIST);
    const dnsValid = dnsValidFilter(query['dns_valid']);
    const result = await this.rpc.request(
      DomainsSubjects.listDomains,
      { account_id: accountId, page, ...(dnsValid === undefined ? {} : { dns_valid: dnsValid }) },
      { requestId: ctx.requestId },
    );
    return toPaginatedList(result, this.cursors, accountId, LIST);
  }

  @Post()
  @HttpCode(201)
  @Idempotent()
  @RequireScopes(['domains:write'])
  create(
    @Ctx() ctx: RequestContext,
    @Body(new BodyPipe(CreateDomainBody)) body: CreateDomainBody,
  ): Promise<DomainRecord> {
    return this.rpc.request(
      DomainsSubjects.createDomain,
      { account_id: ctx.principal.account_id, body },
      { requestId: ctx.requestId },
    );
  }

  @Get(':domain')
  @RequireScopes(['domains:read'])
  get(@Ctx() ctx: RequestContext, @Param('domain') domain: string): Promise<DomainRecord> {
    return this.rpc.request(
      DomainsSubjects.getDomain,
      { account_id: ctx.principal.account_id, domain: domainParam(domain) },
      { requestId: ctx.requestId },
    );
  }

  @Put(':domain')
  @RequireScopes(['domains:write'])
  update(
    @Ctx() ctx: RequestContext,
    @Param('domain') domain: string,
    @Body(new BodyPipe(UpdateDomainBody)) changes: UpdateDomainBody,
  ): Promise<DomainRecord> {
    return this.rpc.request(
      DomainsSubjects.updateDomain,
      { account_id: ctx.principal.account_id, domain: domainParam(domain), changes },
      { requestId: ctx.requestId },
    );
  }

  /** `domains:delete:all` or the domain's own `domains:delete:{domain}` (spec 5.5). */
  @Delete(':domain')
  @RequireScopes(['domains:delete:{domain}'], {
    domainFrom: domainFromParam('domain', domainParam),
  })
  remove(@Ctx() ctx: RequestContext, @Param('domain') domain: string): Promise<MessageResponse> {
    return this.rpc.request(
      DomainsSubjects.deleteDomain,
      { account_id: ctx.principal.account_id, domain: domainParam(domain) },
      { requestId: ctx.requestId },
    );
  }

  /** Checks the DNS now; a check within the last minute answers from cache (503 if DNS is down). */
  @Post(':domain/check-dns')
  @HttpCode(200)
  @RequireScopes(['domains:write'])
  checkDns(@Ctx() ctx: RequestContext, @Param('domain') domain: string): Promise<DomainRecord> {
    return this.rpc.request(
      DomainsSubjects.checkDns,
      { account_id: ctx.principal.account_id, domain: domainParam(domain) },
      { requestId: ctx.requestId },
    );
  }
}
