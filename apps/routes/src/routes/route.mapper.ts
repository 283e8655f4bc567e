import type { CreatedRouteRecord, RouteRecord } from '@envoi/contracts-routes';

import type { RouteEntity } from './route.entity';

/** The public record: never the keyset position, the domain id nor the sealed secret. */
export function toRouteRecord(route: RouteEntity): RouteRecord {
  return {
    object: 'route',
    id: route.id,
    created_at: route.createdAt.toISOString(),
    updated_at: route.updatedAt.toISOString(),
    name: route.name,
    url: route.url,
    recipient: route.recipient,
    enabled: route.enabled,
    attachments: route.attachments,
    headers: route.headers,
    group_by_message_id: route.groupByMessageId,
    strip_replies: route.stripReplies,
    success_count: Number(route.successCount),
    error_count: Number(route.errorCount),
    errors_since_last_success: route.errorsSinceLastSuccess,
    last_request_at: route.lastRequestAt?.toISOString() ?? null,
  };
}

/** The creation's record: the only one with the secret. */
export function toCreatedRouteRecord(route: RouteEntity, secret: string): CreatedRouteRecord {
  return { ...toRouteRecord(route), secret };
}
