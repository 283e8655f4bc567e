import {
  MessagesSubjects,
  type TrackedClickResult,
  type TrackedOpenResult,
  TrackingHitRequest,
} from '@envoi/contracts-messages';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { TrackingHitsService } from './tracking-hits.service';

/** The public tracking routes' calls (the gateway serves `/t/o/…` and `/t/c/…`). */
@Controller()
export class TrackingController {
  constructor(private readonly hits: TrackingHitsService) {}

  @MessagePattern(MessagesSubjects.trackOpen.name)
  open(@Payload() request: TrackingHitRequest): Promise<TrackedOpenResult> {
    return this.hits.open(request);
  }

  @MessagePattern(MessagesSubjects.trackClick.name)
  click(@Payload() request: TrackingHitRequest): Promise<TrackedClickResult> {
    return this.hits.click(request);
  }
}
