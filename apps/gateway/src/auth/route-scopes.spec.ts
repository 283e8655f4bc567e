import 'reflect-metadata';

import { Controller, Delete, Get, Post } from '@nestjs/common';

import { GATEWAY_CONTROLLERS } from '../controllers';
import { declaredRoutes } from '../routes';
import { assertRouteScopes, routeScopeProblems } from './route-scopes';
import {
  DOMAIN_FROM_RESOURCE,
  domainFromBody,
  domainFromParam,
  DomainScope,
  Public,
  PUBLIC_METADATA,
  RequireScopes,
  ResourceDomains,
  SCOPE_POLICY_METADATA,
  type ScopePolicy,
} from './scope-policy';

class SendBody {
  from!: { email: string };
}

describe('every gateway route', () => {
  const routes = declaredRoutes(GATEWAY_CONTROLLERS);

  it('finds them all', () => {
    expect(routes.length).toBeGreaterThan(20);
  });

  it.each(routes.map((route) => [route.name, route] as const))(
    '%s declares a scope policy or is public',
    (_name, route) => {
      const policy = Reflect.getMetadata(SCOPE_POLICY_METADATA, route.handler) as
        ScopePolicy | undefined;
      const isPublic = Reflect.getMetadata(PUBLIC_METADATA, route.handler) === true;
      expect(policy !== undefined || isPublic).toBe(true);
    },
  );

  it('declares scopes the guard can enforce, domain sources included', () => {
    expect(routeScopeProblems(routes)).toEqual([]);
  });

  it('declares public only the tracking routes', () => {
    const publicRoutes = routes.filter(
      (route) => Reflect.getMetadata(PUBLIC_METADATA, route.handler) === true,
    );
    expect(publicRoutes.map((route) => route.path).every((path) => path.startsWith('/t/'))).toBe(
      true,
    );
  });
});

describe('routeScopeProblems', () => {
  @Controller('x/:domain')
  class Faulty {
    @Get('none')
    none(): void {
      // a handler stub: only its decorators matter
    }

    @Get('both')
    @Public()
    @RequireScopes(['accounts:read'])
    both(): void {
      // a handler stub: only its decorators matter
    }

    @Delete('missing-param')
    @RequireScopes(['domains:delete:{domain}'], {
      domainFrom: domainFromParam('name', (raw) => raw),
    })
    missingParam(): void {
      // a handler stub: only its decorators matter
    }

    @Get('resource')
    @RequireScopes(['messages:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
    resourceWithoutParameter(): void {
      // a handler stub: only its decorators matter
    }

    @Get('stray')
    @RequireScopes(['messages:send:{domain}'], {
      domainFrom: domainFromBody(SendBody, (body) => body.from.email),
    })
    strayParameter(@ResourceDomains() _scope: DomainScope): void {
      // a handler stub: only its decorators matter
    }
  }

  @Controller('y/:domain')
  class Sound {
    @Get('ping')
    @RequireScopes()
    ping(): void {
      // a handler stub: only its decorators matter
    }

    @Delete()
    @RequireScopes(['domains:delete:{domain}'], {
      domainFrom: domainFromParam('domain', (raw) => raw),
    })
    remove(): void {
      // a handler stub: only its decorators matter
    }

    @Get('messages')
    @RequireScopes(['messages:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
    list(@ResourceDomains() _scope: DomainScope): void {
      // a handler stub: only its decorators matter
    }

    @Post('send')
    @RequireScopes(['messages:send:{domain}'], {
      domainFrom: domainFromBody(SendBody, (body) => body.from.email),
    })
    send(): void {
      // a handler stub: only its decorators matter
    }

    @Get('pixel')
    @Public()
    pixel(): void {
      // a handler stub: only its decorators matter
    }
  }

  it('names each faulty route and what is wrong', () => {
    expect(routeScopeProblems(declaredRoutes([Faulty]))).toEqual([
      'GET /x/:domain/none declares no scopes and is not public',
      'GET /x/:domain/both is public and declares scopes',
      'DELETE /x/:domain/missing-param takes its domain from :name, which its path lacks',
      'GET /x/:domain/resource takes its domain from the resource but has no @ResourceDomains() parameter',
      'GET /x/:domain/stray has a @ResourceDomains() parameter but does not take its domain from the resource',
    ]);
    expect(() => assertRouteScopes(declaredRoutes([Faulty]))).toThrow(/route scopes/);
  });

  it('accepts sound declarations', () => {
    expect(routeScopeProblems(declaredRoutes([Sound]))).toEqual([]);
    expect(() => assertRouteScopes(declaredRoutes([Sound]))).not.toThrow();
  });
});

describe('RequireScopes', () => {
  it('refuses a {domain} scope without a domain source', () => {
    expect(() => RequireScopes(['messages:read:{domain}'])).toThrow(/needs domainFrom/);
  });

  it('refuses a domain source without a {domain} scope', () => {
    expect(() => RequireScopes(['accounts:read'], { domainFrom: DOMAIN_FROM_RESOURCE })).toThrow(
      /without a \{domain\} scope/,
    );
  });

  it('refuses a resource source with two {domain} actions', () => {
    expect(() =>
      RequireScopes(['messages:read:{domain}', 'messages:cancel:{domain}'], {
        domainFrom: DOMAIN_FROM_RESOURCE,
      }),
    ).toThrow(/exactly one/);
  });
});
