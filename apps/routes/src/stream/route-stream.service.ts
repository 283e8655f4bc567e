import { CodedError } from '@envoi/contracts-core';
import { type OpenedRouteStreamRecord, RoutesErrorCode } from '@envoi/contracts-routes';
import { type ListenerStreamAccess, ListenerStreamStore } from '@envoi/shared-listener-streams';
import { Injectable } from '@nestjs/common';

import { RoutesException } from '../routes/routes.exception';
import { RoutesService } from '../routes/routes.service';

/**
 * Route streams (platform notes 1.12): opening one (a temporary route for a pattern, or an
 * existing route whose mail is then also buffered) and who may listen; the listener stream itself
 * is the shared ListenerStreams on routes.route_stream_events.
 */
@Injectable()
export class RouteStreamService implements ListenerStreamAccess {
  readonly errors = {
    notFound: () => RoutesException.notFound(),
    listenerAttached: () =>
      new CodedError(
        RoutesErrorCode.StreamListenerAttached,
        'another listener is attached to this route; use force_reconnect=true to replace it',
      ),
    notAttached: () =>
      new CodedError(
        RoutesErrorCode.StreamNotAttached,
        'this listener is no longer attached to the route',
      ),
  };

  constructor(
    private readonly routes: RoutesService,
    private readonly store: ListenerStreamStore,
  ) {}

  /** Exactly one of `routeId` and `recipient`; an existing route needs the rights to update it. */
  async open(
    accountId: string,
    routeId: string | undefined,
    recipient: string | undefined,
    granted: readonly string[] | undefined,
  ): Promise<OpenedRouteStreamRecord> {
    if (recipient !== undefined && routeId === undefined) {
      const created = await this.routes.createTemporary(accountId, recipient, granted);
      return { route_id: created.id };
    }
    if (routeId === undefined || recipient !== undefined) {
      throw new CodedError(
        RoutesErrorCode.StreamTargetInvalid,
        'give exactly one of route_id and recipient',
      );
    }
    await this.requireGranted(accountId, routeId, granted);
    await this.store.markStreamed(routeId);
    return { route_id: routeId };
  }

  /** The route, visible to the key within its domains (404 otherwise). */
  async requireGranted(
    accountId: string,
    routeId: string,
    granted: readonly string[] | undefined,
  ): Promise<void> {
    await this.routes.require(accountId, routeId, granted);
  }
}
