import {
  AcceptSubmissionRequest,
  type AcceptSubmissionResult,
  checkedSubmission,
  MessagesSubjects,
} from '@envoi/contracts-messages';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { validRequest } from '../messages/valid-request';
import { SubmissionAccept } from './submission-accept.service';

@Controller()
export class SubmissionsController {
  constructor(private readonly submissions: SubmissionAccept) {}

  /**
   * Internal, for the SMTP submission server: one DATA transaction, answered once committed. Its
   * payload typed `object` so the transport's pipe leaves it alone: it is checked by hand first
   * (checkedSubmission), and by the contract's decorators only when that does not pass it.
   */
  @MessagePattern(MessagesSubjects.acceptSubmission.name)
  acceptSubmission(@Payload() payload: object): Promise<AcceptSubmissionResult> {
    const request = checkedSubmission(payload) ?? validRequest(AcceptSubmissionRequest, payload);
    return this.submissions.submit(request);
  }
}
