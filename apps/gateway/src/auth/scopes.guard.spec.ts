import 'reflect-metadata';

import { emailDomain } from '@envoi/shared-edge';
import type { Logger } from '@envoi/shared-observability';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Type } from 'class-transformer';
import { IsDefined, IsEmail, IsString, ValidateNested } from 'class-validator';
import type { FastifyRequest } from 'fastify';

import { ApiError } from '../errors/api-error';
import type { Principal } from './principal';
import {
  DOMAIN_FROM_RESOURCE,
  domainFromBody,
  domainFromParam,
  Public,
  RequireScopes,
} from './scope-policy';
import { ScopesGuard } from './scopes.guard';

class Address {
  @IsEmail() email!: string;
}

class SendBody {
  @IsDefined() @ValidateNested() @Type(() => Address) from!: Address;
  @IsString() subject!: string;
}

function parseDomain(raw: string): string {
  if (raw.length === 0) throw new ApiError(400, 'invalid domain');
  return raw.toLowerCase();
}

class Routes {
  @Public() pixel(): void {
    // a handler stub: only its decorators matter
  }
  undeclared(): void {
    // a handler stub: only its decorators matter
  }
  @RequireScopes() ping(): void {
    // a handler stub: only its decorators matter
  }
  @RequireScopes(['accounts:read']) read(): void {
    // a handler stub: only its decorators matter
  }
  @RequireScopes(['domains:delete:{domain}'], {
    domainFrom: domainFromParam('domain', parseDomain),
  })
  removeDomain(): void {
    // a handler stub: only its decorators matter
  }
  @RequireScopes(['messages:send:{domain}'], {
    domainFrom: domainFromBody(SendBody, (body) => emailDomain(body.from.email)),
  })
  send(): void {
    // a handler stub: only its decorators matter
  }
  @RequireScopes(['messages:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  getMessage(): void {
    // a handler stub: only its decorators matter
  }
}

type RouteName = Exclude<keyof Routes, 'constructor'>;

interface Call {
  scopes?: string[];
  params?: Record<string, string>;
  body?: unknown;
  anonymous?: boolean;
}

function call(
  route: RouteName,
  init: Call = {},
): { allowed: () => boolean; request: FastifyRequest } {
  const scopes = init.scopes ?? [];
  const principal = { scopes, scopeSet: new Set(scopes) } as unknown as Principal;
  const request = {
    principal: init.anonymous ? undefined : principal,
    params: init.params ?? {},
    body: init.body,
    routeOptions: { url: `/${route}` },
  } as unknown as FastifyRequest;
  const context = {
    getHandler: () => Routes.prototype[route],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => request }),
  } as unknown as ExecutionContext;
  const logger = { error: jest.fn() } as unknown as Logger;
  const guard = new ScopesGuard(new Reflector(), logger);
  return { allowed: () => guard.canActivate(context), request };
}

function statusOf(run: () => unknown): number {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return (error as ApiError).status;
  }
  throw new Error('expected an ApiError');
}

const validBody = (email: string) => ({ from: { email }, subject: 'hello' });

describe('ScopesGuard', () => {
  it('lets a public route through without a principal', () => {
    expect(call('pixel', { anonymous: true }).allowed()).toBe(true);
  });

  it('denies a route that declares nothing', () => {
    expect(statusOf(call('undeclared', { scopes: ['accounts:read'] }).allowed)).toBe(403);
  });

  it('answers 401 without a principal', () => {
    expect(statusOf(call('read', { anonymous: true }).allowed)).toBe(401);
  });

  it('lets any key ping', () => {
    expect(call('ping').allowed()).toBe(true);
  });

  it('checks static scopes', () => {
    expect(call('read', { scopes: ['accounts:read'] }).allowed()).toBe(true);
    expect(statusOf(call('read', { scopes: ['accounts:write'] }).allowed)).toBe(403);
  });

  describe('a domain from a path parameter', () => {
    const remove = (scopes: string[], domain: string) =>
      call('removeDomain', { scopes, params: { domain } }).allowed;

    it('grants the domain’s own scope and :all', () => {
      expect(remove(['domains:delete:{a.com}'], 'A.com')()).toBe(true);
      expect(remove(['domains:delete:all'], 'b.org')()).toBe(true);
    });

    it('refuses another domain’s scope', () => {
      expect(statusOf(remove(['domains:delete:{a.com}'], 'b.org'))).toBe(403);
    });

    it('answers the parser’s 400 before any 403', () => {
      expect(statusOf(remove([], ''))).toBe(400);
    });
  });

  describe('a domain from the body', () => {
    const send = (scopes: string[], body: unknown) => call('send', { scopes, body }).allowed;

    it('grants the sender domain’s scope and :all', () => {
      expect(send(['messages:send:{a.com}'], validBody('me@A.com'))()).toBe(true);
      expect(send(['messages:send:all'], validBody('me@b.org'))()).toBe(true);
    });

    it('refuses a valid body from another domain with 403', () => {
      expect(statusOf(send(['messages:send:{a.com}'], validBody('me@b.org')))).toBe(403);
    });

    it('answers 400 for an invalid body the key could not send anyway, as validation did first', () => {
      expect(statusOf(send(['messages:send:{a.com}'], { from: { email: 'me@b.org' } }))).toBe(400);
      expect(statusOf(send([], { subject: 'no sender' }))).toBe(400);
      expect(statusOf(send([], 'not an object'))).toBe(400);
    });

    it('leaves an invalid body from a granted domain to the handler’s validation', () => {
      expect(send(['messages:send:{a.com}'], { from: { email: 'me@a.com' } })()).toBe(true);
    });
  });

  describe('a domain from the resource', () => {
    it('hands the handler every domain the key may read', () => {
      const { allowed, request } = call('getMessage', {
        scopes: ['messages:read:{a.com}', 'messages:read:{b.org}', 'messages:send:{c.net}'],
      });
      expect(allowed()).toBe(true);
      expect(request.domainScope?.restriction()).toEqual({ domains: ['a.com', 'b.org'] });
      expect(request.domainScope?.allows('a.com')).toBe(true);
      expect(request.domainScope?.allows('c.net')).toBe(false);
    });

    it('restricts nothing for :all', () => {
      const { allowed, request } = call('getMessage', { scopes: ['messages:read:all'] });
      expect(allowed()).toBe(true);
      expect(request.domainScope?.restriction()).toEqual({});
      expect(request.domainScope?.allows('any.org')).toBe(true);
    });

    it('refuses a key without the action for any domain', () => {
      expect(statusOf(call('getMessage', { scopes: ['messages:send:all'] }).allowed)).toBe(403);
    });
  });
});
