import { requestSubject } from '@envoi/contracts-core';

import type { PingReply, PingRequest } from './requests';

/** Request/reply subjects of the webhooks service (`<domain>.<entity>.<verb>.v<N>`). */
export const WebhooksSubjects = {
  /** An example: answers who it is. Replace it with the service's own subjects. */
  ping: requestSubject<PingRequest, PingReply>('webhooks.service.ping.v1'),
} as const;
