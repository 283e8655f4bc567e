import { AccountsErrorCode } from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';
import { DomainsSubjects, type ResolvedDomains } from '@envoi/contracts-domains';
import { RpcClient, RpcError } from '@envoi/shared-nats';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';

import { AccountsConfig } from '../accounts.config';
import { ApiKeyEvents } from './api-key-events';
import { canonicalizeScopes } from './api-key-rules';
import { DomainScopesRepository } from './domain-scopes.repository';
import { DomainScopesService } from './domain-scopes.service';

const ACCOUNT_ID = '6a0b9a38-0000-4000-8000-0000000000aa';
const A_ID = '6a0b9a38-0000-4000-8000-00000000000a';

describe('DomainScopesService.grant', () => {
  let service: DomainScopesService;
  let request: jest.Mock<Promise<ResolvedDomains>, unknown[]>;

  beforeEach(async () => {
    request = jest.fn<Promise<ResolvedDomains>, unknown[]>();
    const config = Object.assign(new AccountsConfig(), { DOMAINS_RPC_TIMEOUT_MS: 1_234 });
    const module = await Test.createTestingModule({
      providers: [
        DomainScopesService,
        { provide: getDataSourceToken(), useValue: {} },
        { provide: DomainScopesRepository, useValue: {} },
        { provide: RpcClient, useValue: { request } },
        { provide: AccountsConfig, useValue: config },
        { provide: ApiKeyEvents, useValue: { changed: jest.fn() } },
      ],
    }).compile();
    service = module.get(DomainScopesService);
  });

  it('asks nothing of the domains service when no scope names a domain', async () => {
    await expect(
      service.grant(ACCOUNT_ID, canonicalizeScopes(['accounts:read', 'messages:send:all'])),
    ).resolves.toEqual([
      { scope: 'accounts:read', domain: null, domainId: null },
      { scope: 'messages:send:all', domain: null, domainId: null },
    ]);
    expect(request).not.toHaveBeenCalled();
  });

  it('resolves the distinct domains in one request, within the configured timeout', async () => {
    request.mockResolvedValue({ found: [{ domain: 'a.example', domain_id: A_ID }], missing: [] });

    await expect(
      service.grant(
        ACCOUNT_ID,
        canonicalizeScopes(['messages:send:{A.example}', 'routes:read:{a.example}']),
      ),
    ).resolves.toEqual([
      { scope: 'messages:send:{a.example}', domain: 'a.example', domainId: A_ID },
      { scope: 'routes:read:{a.example}', domain: 'a.example', domainId: A_ID },
    ]);
    expect(request).toHaveBeenCalledTimes(1);
    expect(request).toHaveBeenCalledWith(
      DomainsSubjects.resolveDomains,
      { account_id: ACCOUNT_ID, domains: ['a.example'] },
      { timeoutMs: 1_234 },
    );
  });

  it('fails with domain_not_owned for a domain of another account or none', async () => {
    request.mockResolvedValue({ found: [], missing: ['b.example'] });

    await expect(
      service.grant(ACCOUNT_ID, canonicalizeScopes(['messages:send:{b.example}'])),
    ).rejects.toMatchObject({
      code: AccountsErrorCode.DomainNotOwned,
      message: 'domain b.example is not a domain of this account',
    });
  });

  it('answers unavailable, without internals, when the domains service does not answer', async () => {
    request.mockRejectedValue(
      new RpcError(CommonErrorCode.Unavailable, 'domains.domain.resolve.v1: no responders'),
    );

    await expect(
      service.grant(ACCOUNT_ID, canonicalizeScopes(['messages:send:{a.example}'])),
    ).rejects.toMatchObject({
      code: CommonErrorCode.Unavailable,
      message: 'service temporarily unavailable',
    });
  });

  it('passes other errors of the domains service on', async () => {
    const error = new RpcError(CommonErrorCode.Internal, 'internal server error');
    request.mockRejectedValue(error);

    await expect(
      service.grant(ACCOUNT_ID, canonicalizeScopes(['messages:send:{a.example}'])),
    ).rejects.toBe(error);
  });
});
