import {
  AcceptSubmissionRequest,
  type AcceptSubmissionResult,
  MessagesSubjects,
} from '@envoi/contracts-messages';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { SubmissionAccept } from './submission-accept.service';

@Controller()
export class SubmissionsController {
  constructor(private readonly submissions: SubmissionAccept) {}

  /** Internal, for the SMTP submission server: one DATA transaction, answered once committed. */
  @MessagePattern(MessagesSubjects.acceptSubmission.name)
  acceptSubmission(@Payload() request: AcceptSubmissionRequest): Promise<AcceptSubmissionResult> {
    return this.submissions.submit(request);
  }
}
