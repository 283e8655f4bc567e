import { validatePayload } from '@envoi/contracts-core';
import { WEBHOOK_FILTER_NAMES, WebhookFilters } from '@envoi/contracts-webhooks';

import { ApiError } from '../errors/api-error';

type QueryParams = Record<string, string | string[] | undefined>;

/** getWebhooks filters: `enabled` and the 10 flags, each `true` or `false` (else 400). */
export function readWebhookFilters(query: QueryParams): WebhookFilters {
  const filters: WebhookFilters = {};
  for (const name of WEBHOOK_FILTER_NAMES) {
    const value = query[name];
    if (value === undefined) continue;
    if (value !== 'true' && value !== 'false') {
      throw new ApiError(400, `${name} must be a boolean (true or false)`);
    }
    filters[name] = value === 'true';
  }
  const result = validatePayload(WebhookFilters, filters);
  if (!result.ok) throw new ApiError(400, result.message);
  return result.value;
}
