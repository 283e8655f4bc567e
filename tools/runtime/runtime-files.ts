import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The repository root, from dist/tools/<tool>/ or tools/<tool>/. */
export function repositoryRoot(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'nx.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the repository root (nx.json)');
    dir = parent;
  }
  return dir;
}

export function dataDirectory(): string {
  return process.env['ENVOI_DATA_DIR'] ?? path.join(repositoryRoot(), '.data');
}

function readJson<T>(file: string): T | null {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : null;
}

function writeJson(file: string, value: unknown, mode = 0o600): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`, { mode });
}

/** Secrets every replica must share, generated once per development data directory. */
export interface DevSecrets {
  cursor_secret: string;
}

export function ensureDevSecrets(dataDir: string): DevSecrets {
  const file = path.join(dataDir, 'secrets.json');
  const existing = readJson<DevSecrets>(file);
  if (existing?.cursor_secret) return existing;
  const secrets: DevSecrets = { cursor_secret: randomBytes(32).toString('base64url') };
  writeJson(file, secrets);
  return secrets;
}

/** What `npm start` prints and what the README promises in `.data/dev-account.json`. */
export interface DevAccount {
  base_url: string;
  account_id: string;
  api_key: string;
}

export const devAccountFile = (dataDir: string) => path.join(dataDir, 'dev-account.json');
export const readDevAccount = (dataDir: string) => readJson<DevAccount>(devAccountFile(dataDir));
export const writeDevAccount = (dataDir: string, account: DevAccount) =>
  writeJson(devAccountFile(dataDir), account);

/** Where a running `npm start` can be reached, for the admin command. */
export interface RuntimeInfo {
  pid: number;
  base_url: string;
  nats_url: string;
}

export const runtimeFile = (dataDir: string) => path.join(dataDir, 'runtime.json');
export const readRuntimeInfo = (dataDir: string) => readJson<RuntimeInfo>(runtimeFile(dataDir));
export const writeRuntimeInfo = (dataDir: string, info: RuntimeInfo) =>
  writeJson(runtimeFile(dataDir), info, 0o644);
