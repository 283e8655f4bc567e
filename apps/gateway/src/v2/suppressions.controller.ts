import type { MessageResponse, PaginatedList, PlainList } from '@envoi/contracts-core';
import { validatePayload } from '@envoi/contracts-core';
import {
  CreateSuppressionBody,
  DOMAIN_NAME_INPUT_MAX,
  EMAIL_INPUT_MAX,
  SuppressionFilters,
  type SuppressionRecord,
  SuppressionsSubjects,
} from '@envoi/contracts-suppressions';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';

import { RequireScopes } from '../auth/scope-policy';
import { ApiError } from '../errors/api-error';
import { Idempotent } from '../http/edge-route';
import { BodyPipe, Ctx, type RequestContext } from '../http/request-context';
import { CursorCodec } from '../pagination/cursor-codec';
import { readPageRequest, toPaginatedList } from '../pagination/list-query';

type QueryParams = Record<string, string | string[] | undefined>;

const LIST = 'suppressions';
const FILTERS = ['email', 'domain', 'from_time', 'to_time'] as const;

function single(query: QueryParams, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new ApiError(400, `${name} may be given only once`);
  return value;
}

/** getSuppressions filters: checked here; the service normalises them (400 if they are bad). */
function readFilters(query: QueryParams): SuppressionFilters {
  const filters: SuppressionFilters = {};
  for (const name of FILTERS) {
    const value = single(query, name);
    if (value !== undefined) filters[name] = value;
  }
  const result = validatePayload(SuppressionFilters, filters);
  if (!result.ok) throw new ApiError(400, result.message);
  return result.value;
}

/** The `email` query parameter of deleteSuppression: required. */
function readEmail(query: QueryParams): string {
  const email = single(query, 'email');
  if (email === undefined) throw new ApiError(400, 'email is required');
  if (email.length > EMAIL_INPUT_MAX)
    throw new ApiError(400, 'email must be a valid email address');
  return email;
}

/** The optional `domain` filter of the deletes; `{}` when absent. */
function readDomain(query: QueryParams): { domain?: string } {
  const domain = single(query, 'domain');
  if (domain === undefined) return {};
  if (domain.length > DOMAIN_NAME_INPUT_MAX) {
    throw new ApiError(400, 'domain must be a fully qualified domain name');
  }
  return { domain };
}

@Controller('v2/accounts/:account_id/suppressions')
export class SuppressionsController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cursors: CursorCodec,
  ) {}

  /** Unexpired suppressions, newest first, filtered by email, domain and creation time. */
  @Get()
  @RequireScopes(['suppressions:read'])
  async list(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryParams,
  ): Promise<PaginatedList<SuppressionRecord>> {
    const accountId = ctx.principal.account_id;
    const page = readPageRequest(query, this.cursors, accountId, LIST);
    const filters = readFilters(query);
    const result = await this.rpc.request(
      SuppressionsSubjects.list,
      { account_id: accountId, page, filters },
      { requestId: ctx.requestId },
    );
    return toPaginatedList(result, this.cursors, accountId, LIST);
  }

  /** 201 with the contract's list of the one suppression created; 409 when it exists. */
  @Post()
  @HttpCode(201)
  @Idempotent()
  @RequireScopes(['suppressions:write'])
  async create(
    @Ctx() ctx: RequestContext,
    @Body(new BodyPipe(CreateSuppressionBody)) body: CreateSuppressionBody,
  ): Promise<PlainList<SuppressionRecord>> {
    const suppression = await this.rpc.request(
      SuppressionsSubjects.create,
      { account_id: ctx.principal.account_id, body },
      { requestId: ctx.requestId },
    );
    return { object: 'list', data: [suppression] };
  }

  /** Every suppression of `email`, or only the one of `domain`; 404 when there is none. */
  @Delete()
  @RequireScopes(['suppressions:delete'])
  remove(@Ctx() ctx: RequestContext, @Query() query: QueryParams): Promise<MessageResponse> {
    return this.rpc.request(
      SuppressionsSubjects.delete,
      { account_id: ctx.principal.account_id, email: readEmail(query), ...readDomain(query) },
      { requestId: ctx.requestId },
    );
  }

  /** Every suppression of the account, or those of `domain` only (spec 4: `suppressions:wipe`). */
  @Delete('all')
  @RequireScopes(['suppressions:wipe'])
  wipe(@Ctx() ctx: RequestContext, @Query() query: QueryParams): Promise<MessageResponse> {
    return this.rpc.request(
      SuppressionsSubjects.wipe,
      { account_id: ctx.principal.account_id, ...readDomain(query) },
      { requestId: ctx.requestId },
    );
  }
}
