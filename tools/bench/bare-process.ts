import path from 'node:path';

import { type ManagedProcess, startProcess, waitForSignal } from '@envoi/shared-infra';
import { READY_SIGNAL } from '@envoi/shared-observability';

import type { Stoppers } from './bench-platform';

/** The IPC messages a bare process takes and answers: `{type, id, …}`. */
interface RunMessage {
  type: string;
  id: number;
}

/**
 * A bare block running as its own process (tools/bench/<script>.js from dist/), like the service
 * it is compared with, taking its runs over IPC: `{type: runType, id, …}` in, `{type:
 * resultType, id, …}` out.
 */
export class BareProcess<Request extends RunMessage, Result extends RunMessage> {
  private nextId = 1;

  private constructor(
    private readonly handle: ManagedProcess,
    private readonly runType: Request['type'],
    private readonly resultType: Result['type'],
  ) {}

  static async start<Request extends RunMessage, Result extends RunMessage>(
    name: string,
    types: { run: Request['type']; result: Result['type'] },
    paths: { root: string; dataDir: string },
    stoppers: Stoppers,
  ): Promise<BareProcess<Request, Result>> {
    const handle = startProcess(
      name,
      process.execPath,
      [path.join(paths.root, 'dist', 'tools', 'bench', `${name}.js`)],
      {
        env: { PATH: process.env['PATH'] },
        log: { kind: 'file', path: path.join(paths.dataDir, 'logs', `${name}.log`) },
      },
    );
    stoppers.add(name, () => handle.stop());
    await waitForSignal(handle, READY_SIGNAL, 30_000);
    return new BareProcess<Request, Result>(handle, types.run, types.result);
  }

  get pid(): number | undefined {
    return this.handle.child.pid;
  }

  /** One run in the process; rejects after `timeoutMs`, on abort, or if it exits. */
  run(
    request: Omit<Request, 'type' | 'id'>,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<Result> {
    const id = this.nextId++;
    const child = this.handle.child;
    const name = this.handle.name;
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        signal.removeEventListener('abort', onAbort);
      };
      const onMessage = (message: unknown) => {
        const result = message as Partial<Result> | null;
        if (result?.type !== this.resultType || result.id !== id) return;
        cleanup();
        resolve(result as Result);
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new Error(`${name} exited (code ${code}) during a run`));
      };
      const onAbort = () => {
        cleanup();
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${name} did not finish a run within ${timeoutMs} ms`));
      }, timeoutMs);
      child.on('message', onMessage);
      child.once('exit', onExit);
      signal.addEventListener('abort', onAbort, { once: true });
      child.send({ ...request, type: this.runType, id });
    });
  }
}
