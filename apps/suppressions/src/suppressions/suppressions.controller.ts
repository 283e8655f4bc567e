import type { MessageResponse, Page } from '@envoi/contracts-core';
import {
  type AutomaticSuppressionResult,
  CheckSuppressionsRequest,
  type CheckSuppressionsResult,
  CreateAutomaticSuppressionRequest,
  CreateSuppressionRequest,
  DeleteSuppressionRequest,
  ListSuppressionsRequest,
  type SuppressionRecord,
  SuppressionSnapshotRequest,
  type SuppressionSnapshotResult,
  SuppressionsSubjects,
  WipeSuppressionsRequest,
} from '@envoi/contracts-suppressions';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { SuppressionsService } from './suppressions.service';

@Controller()
export class SuppressionsController {
  constructor(private readonly suppressions: SuppressionsService) {}

  @MessagePattern(SuppressionsSubjects.list.name)
  list(@Payload() request: ListSuppressionsRequest): Promise<Page<SuppressionRecord>> {
    return this.suppressions.list(request.account_id, request.filters, request.page);
  }

  @MessagePattern(SuppressionsSubjects.create.name)
  create(@Payload() request: CreateSuppressionRequest): Promise<SuppressionRecord> {
    return this.suppressions.create(request.account_id, request.body);
  }

  @MessagePattern(SuppressionsSubjects.delete.name)
  delete(@Payload() request: DeleteSuppressionRequest): Promise<MessageResponse> {
    return this.suppressions.delete(request.account_id, request.email, request.domain);
  }

  @MessagePattern(SuppressionsSubjects.wipe.name)
  wipe(@Payload() request: WipeSuppressionsRequest): Promise<MessageResponse> {
    return this.suppressions.wipe(request.account_id, request.domain);
  }

  @MessagePattern(SuppressionsSubjects.check.name)
  check(@Payload() request: CheckSuppressionsRequest): Promise<CheckSuppressionsResult> {
    return this.suppressions.check(request.account_id, request.domain, request.emails);
  }

  @MessagePattern(SuppressionsSubjects.snapshot.name)
  snapshot(@Payload() request: SuppressionSnapshotRequest): Promise<SuppressionSnapshotResult> {
    return this.suppressions.snapshot(request.account_id, request.max);
  }

  @MessagePattern(SuppressionsSubjects.createAutomatic.name)
  createAutomatic(
    @Payload() request: CreateAutomaticSuppressionRequest,
  ): Promise<AutomaticSuppressionResult> {
    return this.suppressions.createAutomatic(request);
  }
}
