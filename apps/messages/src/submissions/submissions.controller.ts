import {
  type AcceptSubmissionResult,
  type AcceptSubmissionsResult,
  MessagesSubjects,
} from '@envoi/contracts-messages';
import { Controller, Logger } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { SubmissionAccept } from './submission-accept.service';
import { acceptEach, submissionEntries, submissionRequest } from './submission-outcomes';

@Controller()
export class SubmissionsController {
  private readonly logger = new Logger(SubmissionsController.name);

  constructor(private readonly submissions: SubmissionAccept) {}

  /**
   * Internal, for the SMTP submission server: one DATA transaction, answered once committed. Its
   * payload typed `object` so the transport's pipe leaves it alone: it is checked by hand first
   * (checkedSubmission), and by the contract's decorators only when that does not pass it.
   */
  @MessagePattern(MessagesSubjects.acceptSubmission.name)
  acceptSubmission(@Payload() payload: object): Promise<AcceptSubmissionResult> {
    return this.submissions.submit(submissionRequest(payload));
  }

  /** Internal: the DATA transactions an smtp replica had waiting, each as acceptSubmission. */
  @MessagePattern(MessagesSubjects.acceptSubmissions.name)
  async acceptSubmissions(@Payload() payload: object): Promise<AcceptSubmissionsResult> {
    const outcomes = await acceptEach(
      submissionEntries(payload),
      (request) => this.submissions.submit(request),
      (error) =>
        this.logger.error(
          `a batched submission failed: ${String(error)}`,
          error instanceof Error ? error.stack : undefined,
        ),
    );
    return { outcomes };
  }
}
