import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';

import { loadConfig } from '@envoi/shared-config';
import { createLogger, type Logger } from '@envoi/shared-observability';

import type { Principal } from '../src/auth/principal';
import { GatewayDatabase } from '../src/database/gateway-database';
import { runGatewayMigrations } from '../src/database/run-gateway-migrations';
import { GatewayConfig } from '../src/gateway.config';

export const TEST_ENCRYPTION_KEY = '5e'.repeat(32);

/** The gateway config of a test: the int tier's database and bus, test secrets, `overrides`. */
export function gatewayTestConfig(overrides: Record<string, string> = {}): GatewayConfig {
  return loadConfig(GatewayConfig, {
    NATS_URL: process.env['NATS_URL'],
    DATABASE_URL: process.env['DATABASE_URL'],
    LOG_LEVEL: 'silent',
    TLS_CERT_FILE: '/unused/cert.pem',
    TLS_KEY_FILE: '/unused/key.pem',
    CURSOR_SECRET: 'c'.repeat(40),
    IDEMPOTENCY_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    ...overrides,
  });
}

export function silentLogger(): Logger {
  return createLogger('gateway-test', 'silent');
}

/** Migrates the gateway schema of the int tier's database (safe to run from parallel suites). */
export async function migrateGatewaySchema(): Promise<void> {
  const url = process.env['DATABASE_URL'];
  if (!url) throw new Error('DATABASE_URL is not set: run with jest.int.config.cjs');
  await runGatewayMigrations(url);
}

export function openDatabase(config: GatewayConfig): GatewayDatabase {
  return new GatewayDatabase(config, silentLogger());
}

export function newAccountId(): string {
  return randomUUID();
}

/** What the test authenticator puts on a request for an account. */
export function testPrincipal(accountId: string): Principal {
  return {
    key_id: randomUUID(),
    account_id: accountId,
    parent_account_id: null,
    account_status: 'active',
    scopes: [],
    ip_allow_list: [],
    scopeSet: new Set<string>(),
  };
}

/** A loopback port nothing listens on (bound once by the OS, then closed again). */
export async function closedLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A TCP server on loopback that accepts connections and never answers. */
export interface HangingServer {
  port: number;
  /** Connections accepted and still open. */
  openConnections(): number;
  close(): Promise<void>;
}

export async function startHangingServer(): Promise<HangingServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    openConnections: () => sockets.size,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  json(): unknown;
}

/** One plain HTTP request on its own connection (no keep-alive, nothing left open). */
export function sendRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<TestResponse> {
  const url = new URL(path, baseUrl);
  const headers: Record<string, string | number> = { ...options.headers };
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = Buffer.byteLength(options.body);
  }
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body,
            text,
            json: () => JSON.parse(text) as unknown,
          });
        });
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

/** A promise with its resolver outside, for handlers the test lets finish. */
export interface Gate {
  promise: Promise<void>;
  open(): void;
}

export function newGate(): Gate {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
