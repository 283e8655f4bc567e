import { rmSync } from 'node:fs';

import { takeTestInfrastructure } from '@envoi/shared-testing';

export default async function globalTeardown(): Promise<void> {
  const handle = takeTestInfrastructure();
  if (!handle) return;
  await handle.stop();
  if (process.env['E2E_KEEP_DATA']) console.log(`e2e data and logs kept in ${handle.dir}`);
  else rmSync(handle.dir, { recursive: true, force: true });
}
