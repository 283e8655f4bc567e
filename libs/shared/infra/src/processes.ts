import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Readable } from 'node:stream';

export type LogSink = { kind: 'console'; prefix: string } | { kind: 'file'; path: string };

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stop(timeoutMs?: number): Promise<void>;
}

/**
 * Starts a child process whose output goes to the console (prefixed) or a file, and which this
 * launcher alone stops, by its PID: SIGTERM, then SIGKILL after the timeout.
 */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; log: LogSink; cwd?: string },
): ManagedProcess {
  // An IPC channel: Node services announce readiness over it (see announceReady).
  const child = spawn(command, args, {
    env: options.env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let file: WriteStream | undefined;
  if (options.log.kind === 'file') {
    file = createWriteStream(options.log.path, { flags: 'a' });
    child.stdout?.pipe(file);
    child.stderr?.pipe(file);
  } else {
    const prefix = options.log.prefix;
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      onLines(stream, (line) => process.stdout.write(`${prefix} ${line}\n`));
    }
  }
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      file?.end();
      resolve(code);
    });
  });
  return {
    name,
    child,
    exited,
    // Above every service's default SHUTDOWN_GRACE_MS (10 s), plus the time to close.
    async stop(timeoutMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Calls `onLine` for each complete line of a stream. Unlike readline, detaching never pauses the
 * stream, so other readers (a log file pipe) keep flowing. Returns the detach function.
 */
export function onLines(stream: Readable, onLine: (line: string) => void): () => void {
  let pending = '';
  const onData = (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  };
  stream.on('data', onData);
  return () => stream.off('data', onData);
}

/** Resolves when the process sends `signal` over its IPC channel; rejects if it exits first. */
export function waitForSignal(
  processHandle: ManagedProcess,
  signal: { type: string },
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const { child } = processHandle;
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${processHandle.name} was not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (message: unknown) => {
      if ((message as { type?: unknown } | null)?.type !== signal.type) return;
      cleanup();
      resolve();
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`${processHandle.name} exited with code ${code} before it was ready`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Runs a command to completion; rejects with its output when it fails. */
export function runToCompletion(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output}`));
    });
  });
}
