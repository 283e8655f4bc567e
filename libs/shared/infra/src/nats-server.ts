import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';

import { waitForPort } from './ports';
import { type LogSink, type ManagedProcess, startProcess } from './processes';

export interface NatsHandle {
  url: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

function which(binary: string): string | null {
  const result = spawnSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

/**
 * Finds `nats-server`, installing Debian's package when it is missing and this process may
 * (root with apt-get). Fails with instructions otherwise.
 */
export function ensureNatsServerBinary(log: (line: string) => void = () => undefined): string {
  const found = which('nats-server');
  if (found) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && which('apt-get')) {
    log('nats-server is missing; installing the Debian package nats-server');
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'nats-server'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    const installed = which('nats-server');
    if (installed) return installed;
  }
  throw new Error(
    'nats-server is not installed. Install it (Debian/Ubuntu: `sudo apt-get install nats-server`) ' +
      'or point NATS_URL at a running NATS server with JetStream enabled.',
  );
}

/** Starts a local nats-server with JetStream, storing streams under `storeDir`. */
export async function startNatsServer(options: {
  storeDir: string;
  port: number;
  log: LogSink;
}): Promise<NatsHandle> {
  const binary = ensureNatsServerBinary((line) => console.log(line));
  mkdirSync(options.storeDir, { recursive: true });
  const args = ['-a', '127.0.0.1', '-p', String(options.port), '-js', '-sd', options.storeDir];
  const processHandle = startProcess('nats', binary, args, { env: process.env, log: options.log });
  try {
    await Promise.race([
      waitForPort(options.port, 15_000, 'nats-server'),
      processHandle.exited.then((code) => {
        throw new Error(`nats-server exited with code ${code} (is port ${options.port} in use?)`);
      }),
    ]);
  } catch (error) {
    await processHandle.stop();
    throw error;
  }
  return {
    url: `nats://127.0.0.1:${options.port}`,
    process: processHandle,
    stop: () => processHandle.stop(),
  };
}
