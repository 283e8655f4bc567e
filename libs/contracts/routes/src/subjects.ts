import type { MessageResponse, Page } from '@envoi/contracts-core';
import { eventSubject, requestSubject, streamSubject } from '@envoi/contracts-core';

import type { RouteMatchChangedEvent } from './events';
import type {
  BounceMailEvent,
  FeedbackMailEvent,
  InboundReceptionEvent,
  RecipientMatch,
  RoutedMailEvent,
} from './inbound';
import type { DomainRouteSet } from './recipient-pattern';
import type { CreatedRouteRecord, RouteRecord } from './records';
import type {
  CreateRouteRequest,
  DomainRoutesRequest,
  ListRoutesRequest,
  MatchRecipientRequest,
  RouteRef,
  UpdateRouteRequest,
} from './requests';

/** Request/reply subjects of the routes service (`<domain>.<entity>.<verb>.v<N>`). */
export const RoutesSubjects = {
  list: requestSubject<ListRoutesRequest, Page<RouteRecord>>('routes.route.list.v1'),
  create: requestSubject<CreateRouteRequest, CreatedRouteRecord>('routes.route.create.v1'),
  get: requestSubject<RouteRef, RouteRecord>('routes.route.get.v1'),
  update: requestSubject<UpdateRouteRequest, RouteRecord>('routes.route.update.v1'),
  delete: requestSubject<RouteRef, MessageResponse>('routes.route.delete.v1'),
  /** POSTs a sample `message.routing` to the route URL now; answers how it went. */
  trigger: requestSubject<RouteRef, MessageResponse>('routes.route.trigger.v1'),
  /** The MX at RCPT time (answers from enabled routes only). */
  matchRecipient: requestSubject<MatchRecipientRequest, RecipientMatch>(
    'routes.route.match-recipient.v1',
  ),
  /** The MX at RCPT time: a domain's route set, which it keeps until `matchChanged` says. */
  domainRoutes: requestSubject<DomainRoutesRequest, DomainRouteSet>(
    'routes.route.domain-routes.v1',
  ),
  /**
   * Broadcast to every smtp replica (no queue group), after the change committed: drop the cached
   * route sets of a domain (at most once; the caches also expire).
   */
  matchChanged: eventSubject<RouteMatchChangedEvent>('routes.route.match-changed.v1'),
} as const;

/** Durable events of the MX (published by the smtp app once the message is spooled). */
export const InboundStreamSubjects = {
  /** Mail for routes: the routes service parses it and POSTs it to the route URLs. */
  routed: streamSubject<RoutedMailEvent>('events.inbound.routed.v1'),
  /** Asynchronous bounces (DSNs and the like), matched to the message by its VERP address. */
  bounce: streamSubject<BounceMailEvent>('events.inbound.bounce.v1'),
  /** ARF feedback reports (complaints). */
  feedback: streamSubject<FeedbackMailEvent>('events.inbound.feedback.v1'),
  /** `message.reception` of each routed recipient, for the webhooks. */
  reception: streamSubject<InboundReceptionEvent>('events.inbound.reception.v1'),
} as const;
