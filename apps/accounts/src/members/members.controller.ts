import {
  AccountRef,
  AccountsSubjects,
  AddMemberRequest,
  type MemberRecord,
  RemoveMemberRequest,
} from '@envoi/contracts-accounts';
import type { MessageResponse, PlainList } from '@envoi/contracts-core';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { MembersService } from './members.service';

@Controller()
export class MembersController {
  constructor(private readonly members: MembersService) {}

  @MessagePattern(AccountsSubjects.listMembers.name)
  list(@Payload() request: AccountRef): Promise<PlainList<MemberRecord>> {
    return this.members.list(request.account_id);
  }

  @MessagePattern(AccountsSubjects.addMember.name)
  add(@Payload() request: AddMemberRequest): Promise<MemberRecord> {
    return this.members.add(request.account_id, request.member);
  }

  @MessagePattern(AccountsSubjects.removeMember.name)
  remove(@Payload() request: RemoveMemberRequest): Promise<MessageResponse> {
    return this.members.remove(request.account_id, request.user_id);
  }
}
