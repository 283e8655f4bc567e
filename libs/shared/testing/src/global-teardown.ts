import { rmSync } from 'node:fs';

import { takeTestInfrastructure } from './infrastructure-handle';

export default async function globalTeardown(): Promise<void> {
  const handle = takeTestInfrastructure();
  if (!handle) return;
  await handle.stop();
  rmSync(handle.dir, { recursive: true, force: true });
}
