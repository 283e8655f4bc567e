import type { ListenerStreamSubjects } from '@envoi/contracts-core';
import { RouteStreamSubjects } from '@envoi/contracts-routes';
import { WebhookStreamSubjects } from '@envoi/contracts-webhooks';

/** What a listener stream is of: its path segment, its service's subjects, who may listen. */
export interface StreamKind {
  /** The path segment (`…/{name}/{id}/listen`) and the `stream` every frame names. */
  name: 'webhooks' | 'routes';
  /** The target id's name in errors (`webhook_id`, `route_id`). */
  idName: string;
  subjects: ListenerStreamSubjects;
  /** Listening reads the target's events: its read scope, for all or for its domains. */
  listenScopes: string[][];
}

export const WEBHOOK_STREAM: StreamKind = {
  name: 'webhooks',
  idName: 'webhook_id',
  subjects: WebhookStreamSubjects,
  listenScopes: [['webhooks:read:{domain}']],
};

export const ROUTE_STREAM: StreamKind = {
  name: 'routes',
  idName: 'route_id',
  subjects: RouteStreamSubjects,
  listenScopes: [['routes:read:{domain}']],
};

export const STREAM_KINDS: readonly StreamKind[] = [WEBHOOK_STREAM, ROUTE_STREAM];

/** Where the WebSocket of a target's stream is served. */
export function listenPath(kind: StreamKind['name'], accountId: string, targetId: string): string {
  return `/v2/accounts/${accountId}/${kind}/${targetId}/listen`;
}
