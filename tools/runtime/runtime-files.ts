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
  /** Seals stored idempotent responses that carry a secret (gateway). */
  idempotency_encryption_key: string;
  /** Encrypts DKIM private keys at rest (domains): losing it loses every domain's key. */
  dkim_encryption_key: string;
  /** Encrypts webhook signing secrets at rest (webhooks): losing it loses every secret. */
  webhook_secret_encryption_key: string;
  /** Encrypts SMTP credential passwords at rest (accounts): losing it loses every stored one. */
  smtp_password_encryption_key: string;
  /** Encrypts route signing secrets at rest (routes): losing it loses every secret. */
  route_secret_encryption_key: string;
  /** Signs open and click tracking tokens (messages). */
  tracking_secret: string;
}

const GENERATE: { readonly [Name in keyof DevSecrets]: () => string } = {
  cursor_secret: () => randomBytes(32).toString('base64url'),
  idempotency_encryption_key: () => randomBytes(32).toString('hex'),
  dkim_encryption_key: () => randomBytes(32).toString('hex'),
  webhook_secret_encryption_key: () => randomBytes(32).toString('hex'),
  smtp_password_encryption_key: () => randomBytes(32).toString('hex'),
  route_secret_encryption_key: () => randomBytes(32).toString('hex'),
  tracking_secret: () => randomBytes(32).toString('base64url'),
};

/** Reads the development secrets, generating (and saving) any that are missing; never replaces one. */
export function ensureDevSecrets(dataDir: string): DevSecrets {
  const file = path.join(dataDir, 'secrets.json');
  const existing = readJson<Partial<DevSecrets>>(file) ?? {};
  const secrets = { ...existing } as DevSecrets;
  let generated = false;
  for (const name of Object.keys(GENERATE) as Array<keyof DevSecrets>) {
    if (existing[name]) continue;
    secrets[name] = GENERATE[name]();
    generated = true;
  }
  if (generated) writeJson(file, secrets);
  return secrets;
}

/** The services' environment for the development secrets; a variable already set wins. */
export function devSecretsEnv(secrets: DevSecrets, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    CURSOR_SECRET: env['CURSOR_SECRET'] || secrets.cursor_secret,
    IDEMPOTENCY_ENCRYPTION_KEY:
      env['IDEMPOTENCY_ENCRYPTION_KEY'] || secrets.idempotency_encryption_key,
    DKIM_ENCRYPTION_KEY: env['DKIM_ENCRYPTION_KEY'] || secrets.dkim_encryption_key,
    WEBHOOK_SECRET_ENCRYPTION_KEY:
      env['WEBHOOK_SECRET_ENCRYPTION_KEY'] || secrets.webhook_secret_encryption_key,
    SMTP_PASSWORD_ENCRYPTION_KEY:
      env['SMTP_PASSWORD_ENCRYPTION_KEY'] || secrets.smtp_password_encryption_key,
    ROUTE_SECRET_ENCRYPTION_KEY:
      env['ROUTE_SECRET_ENCRYPTION_KEY'] || secrets.route_secret_encryption_key,
    TRACKING_SECRET: env['TRACKING_SECRET'] || secrets.tracking_secret,
  };
}

/** What `npm start` prints and what the README promises in `.data/dev-account.json`. */
export interface DevAccount {
  base_url: string;
  account_id: string;
  api_key: string;
  /** Each service's health endpoints (`/healthz`, `/readyz`): base URL by service name. */
  health: Record<string, string>;
  /** Where SMTP submission (STARTTLS) is served. */
  smtp_submission: { host: string; port: number };
  /** Where the MX takes inbound mail (routes, bounces), and the complaints address. */
  smtp_mx: { host: string; port: number; feedback_address: string };
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
