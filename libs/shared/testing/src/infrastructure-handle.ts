/** Handle passed from jest's global setup to its teardown (they share one process). */
export interface TestInfrastructure {
  dir: string;
  stop(): Promise<void>;
}

const KEY = Symbol.for('envoi.test-infrastructure');

export function setTestInfrastructure(handle: TestInfrastructure): void {
  (globalThis as Record<symbol, unknown>)[KEY] = handle;
}

export function takeTestInfrastructure(): TestInfrastructure | undefined {
  const handle = (globalThis as Record<symbol, unknown>)[KEY] as TestInfrastructure | undefined;
  delete (globalThis as Record<symbol, unknown>)[KEY];
  return handle;
}
