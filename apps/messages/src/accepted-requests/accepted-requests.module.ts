import { Module } from '@nestjs/common';

import { AcceptedRequestsRepository } from './accepted-requests.repository';
import { AcceptedRequests } from './accepted-requests.service';
import { AcceptedRequestsPurger } from './accepted-requests-purger.service';

/** Sends committed under an `Idempotency-Key`, and their purge. */
@Module({
  providers: [AcceptedRequestsRepository, AcceptedRequests, AcceptedRequestsPurger],
  exports: [AcceptedRequests],
})
export class AcceptedRequestsModule {}
