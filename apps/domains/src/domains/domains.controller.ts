import type { MessageResponse, Page } from '@envoi/contracts-core';
import {
  AuthorizeSenderRequest,
  CountDomainsRequest,
  CreateDomainRequest,
  type DkimSigningKey,
  type DomainCounts,
  type DomainOwners,
  type DomainRecord,
  DomainRef,
  DomainsSubjects,
  FindDomainOwnersRequest,
  GetDkimSigningKeyRequest,
  ListDomainsRequest,
  MatchReturnPathHostRequest,
  type ResolvedDomains,
  ResolveDomainsRequest,
  type ReturnPathHostMatch,
  type SenderAuthorization,
  UpdateDomainRequest,
} from '@envoi/contracts-domains';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { DomainsService } from './domains.service';

@Controller()
export class DomainsController {
  constructor(private readonly domains: DomainsService) {}

  @MessagePattern(DomainsSubjects.listDomains.name)
  list(@Payload() request: ListDomainsRequest): Promise<Page<DomainRecord>> {
    return this.domains.list(request.account_id, request.dns_valid, request.page);
  }

  @MessagePattern(DomainsSubjects.createDomain.name)
  create(@Payload() request: CreateDomainRequest): Promise<DomainRecord> {
    return this.domains.create(request.account_id, request.body);
  }

  @MessagePattern(DomainsSubjects.getDomain.name)
  get(@Payload() request: DomainRef): Promise<DomainRecord> {
    return this.domains.get(request.account_id, request.domain);
  }

  @MessagePattern(DomainsSubjects.updateDomain.name)
  update(@Payload() request: UpdateDomainRequest): Promise<DomainRecord> {
    return this.domains.update(request.account_id, request.domain, request.changes);
  }

  @MessagePattern(DomainsSubjects.deleteDomain.name)
  delete(@Payload() request: DomainRef): Promise<MessageResponse> {
    return this.domains.delete(request.account_id, request.domain);
  }

  @MessagePattern(DomainsSubjects.checkDns.name)
  checkDns(@Payload() request: DomainRef): Promise<DomainRecord> {
    return this.domains.checkDns(request.account_id, request.domain);
  }

  @MessagePattern(DomainsSubjects.findOwners.name)
  findOwners(@Payload() request: FindDomainOwnersRequest): Promise<DomainOwners> {
    return this.domains.findOwners(request.domain);
  }

  @MessagePattern(DomainsSubjects.authorizeSender.name)
  authorizeSender(@Payload() request: AuthorizeSenderRequest): Promise<SenderAuthorization> {
    return this.domains.authorizeSender(request.account_id, request.domain);
  }

  @MessagePattern(DomainsSubjects.getDkimSigningKey.name)
  dkimSigningKey(@Payload() request: GetDkimSigningKeyRequest): Promise<DkimSigningKey> {
    return this.domains.dkimSigningKey(request.account_id, request.domain);
  }

  @MessagePattern(DomainsSubjects.resolveDomains.name)
  resolve(@Payload() request: ResolveDomainsRequest): Promise<ResolvedDomains> {
    return this.domains.resolve(request.account_id, request.domains);
  }

  @MessagePattern(DomainsSubjects.matchReturnPathHost.name)
  matchReturnPathHost(
    @Payload() request: MatchReturnPathHostRequest,
  ): Promise<ReturnPathHostMatch> {
    return this.domains.matchReturnPathHost(request.host);
  }

  @MessagePattern(DomainsSubjects.countDomains.name)
  count(@Payload() request: CountDomainsRequest): Promise<DomainCounts> {
    return this.domains.count(request.account_ids);
  }
}
