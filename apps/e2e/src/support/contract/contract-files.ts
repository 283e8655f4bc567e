import path from 'node:path';

import type { ApiName } from './contract-document';

const WORKSPACE_ROOT = path.resolve(__dirname, '../../../../..');

/** Where the reference contracts live: copied into apps/e2e/contract/reference, or E2E_CONTRACT_DIR. */
export function contractDirectory(): string {
  return (
    process.env['E2E_CONTRACT_DIR'] ?? path.join(WORKSPACE_ROOT, 'apps/e2e/contract/reference')
  );
}

/** The OpenAPI file of each API version Envoi serves. */
export function contractFile(api: ApiName): string {
  const name = api === 'v2' ? 'openapi.yaml' : 'openapi-v1.yaml';
  return path.join(contractDirectory(), name);
}

/** The reference webhook payloads (validate them with shared-testing's WebhookPayloadValidator). */
export function webhooksContractFile(): string {
  return path.join(contractDirectory(), 'webhooks.yaml');
}

/** The one place where deliberate differences from the contract are recorded. */
export const DEVIATIONS_FILE = path.join(WORKSPACE_ROOT, 'apps/e2e/contract/deviations.yaml');
