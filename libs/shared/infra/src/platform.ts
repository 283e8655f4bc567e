import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

import { READY_SIGNAL } from '@envoi/shared-observability';

import { type CertificatePaths, ensureDevCertificate } from './certificates';
import { startNatsServer } from './nats-server';
import { findFreePort, isPortOpen } from './ports';
import { startEmbeddedPostgres } from './postgres';
import {
  type LogSink,
  type ManagedProcess,
  runToCompletion,
  startProcess,
  waitForSignal,
} from './processes';
import { PLATFORM_SERVICES } from './services';

export interface PlatformOptions {
  /** Root of compiled code: the `dist/` directory. */
  distDir: string;
  /** Where PostgreSQL data, NATS streams, certificates and logs live. */
  dataDir: string;
  /** Keep PostgreSQL data across runs (development) or throw it away (tests). */
  persistent: boolean;
  /** Use DATABASE_URL / NATS_URL from here when set instead of starting local servers. */
  env: NodeJS.ProcessEnv;
  ports: {
    postgres: number | 'any';
    nats: number | 'any';
    https: number | 'any';
    /** SMTP submission (STARTTLS); any free port when not given. */
    smtp?: number | 'any';
    /** The MX (inbound mail); any free port when not given. */
    smtpMx?: number | 'any';
  };
  /** Service output: prefixed on the console, or one log file per process under dataDir/logs. */
  logTo: 'console' | 'files';
  /** Extra environment for every service (durations for tests, for instance). */
  serviceEnv?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface RunningPlatform {
  baseUrl: string;
  httpsPort: number;
  databaseUrl: string;
  natsUrl: string;
  certificate: CertificatePaths;
  /** Where the smtp app serves submission with STARTTLS. */
  smtpSubmission: { host: string; port: number };
  /** Where the smtp app serves the MX, and the address complaints (ARF reports) go to. */
  smtpMx: { host: string; port: number; feedback_address: string };
  services: ManagedProcess[];
  /** Each service's health endpoints (`/healthz`, `/readyz`): base URL by service name. */
  health: Record<string, string>;
  /** The environment the services were started with (each also got its own HEALTH_PORT). */
  serviceEnv: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

async function choosePort(port: number | 'any', what: string): Promise<number> {
  if (port === 'any') return findFreePort();
  if (await isPortOpen(port)) {
    throw new Error(`port ${port} for ${what} is already in use (is Envoi already running?)`);
  }
  return port;
}

/**
 * A key that encrypts data at rest (DKIM private keys, webhook secrets). A platform whose data
 * outlives it must be given one (the start tool keeps it in the data directory's secrets); a
 * throwaway one gets its own.
 */
function encryptionKey(options: PlatformOptions, name: string): string {
  const given = options.serviceEnv?.[name] ?? options.env[name];
  if (given) return given;
  if (options.persistent) {
    throw new Error(`${name} is required when the platform keeps its data`);
  }
  return randomBytes(32).toString('hex');
}

/**
 * The key that signs tracking links: given, or (for a throwaway platform) generated. A platform
 * whose data outlives it must be given one, or the links in mail it sent stop working.
 */
function trackingSecret(options: PlatformOptions): string {
  const given = options.serviceEnv?.['TRACKING_SECRET'] ?? options.env['TRACKING_SECRET'];
  if (given) return given;
  if (options.persistent) {
    throw new Error('TRACKING_SECRET is required when the platform keeps its data');
  }
  return randomBytes(32).toString('base64url');
}

/** The platform runs on this machine: every service serves its health endpoints on loopback. */
const HEALTH_HOST = '127.0.0.1';
/** SMTP submission listens on loopback only, as the API does. */
const SMTP_HOST = '127.0.0.1';

/** The platform's bounce (VERP) host unless RETURN_PATH_TARGET says otherwise. */
const DEFAULT_BOUNCE_DOMAIN = 'bounces.envoi.test';

function setting(options: PlatformOptions, name: string): string | undefined {
  return options.serviceEnv?.[name] ?? options.env[name];
}

/** The smtp app's SMTP_MX_FEEDBACK_ADDRESS, or its default `fbl@<bounce domain>`. */
function feedbackAddress(env: NodeJS.ProcessEnv): string {
  const bounceDomain = env['SMTP_MX_BOUNCE_DOMAIN'] ?? env['RETURN_PATH_TARGET'];
  return (env['SMTP_MX_FEEDBACK_ADDRESS'] ?? `fbl@${bounceDomain}`).toLowerCase();
}

function logSink(options: PlatformOptions, name: string): LogSink {
  if (options.logTo === 'console') return { kind: 'console', prefix: `[${name}]` };
  return { kind: 'file', path: path.join(options.dataDir, 'logs', `${name}.log`) };
}

/**
 * Starts the whole platform: PostgreSQL and NATS unless configured, migrations, then every
 * service, each waited for until it reports ready. `stop()` stops only what this started.
 */
export async function startPlatform(options: PlatformOptions): Promise<RunningPlatform> {
  const log = options.log ?? (() => undefined);
  const stoppers: Array<() => Promise<void>> = [];
  const services: ManagedProcess[] = [];
  const stop = async () => {
    for (const service of [...services].reverse()) await service.stop();
    for (const stopper of stoppers.reverse()) await stopper().catch(() => undefined);
  };
  mkdirSync(path.join(options.dataDir, 'logs'), { recursive: true });

  try {
    let databaseUrl = options.env['DATABASE_URL'];
    if (!databaseUrl) {
      const port = await choosePort(options.ports.postgres, 'PostgreSQL');
      log(`starting PostgreSQL (embedded) on 127.0.0.1:${port}`);
      const postgres = await startEmbeddedPostgres({
        dataDir: path.join(options.dataDir, 'postgres'),
        port,
        database: 'envoi',
        persistent: options.persistent,
      });
      stoppers.push(() => postgres.stop());
      databaseUrl = postgres.url;
    }

    let natsUrl = options.env['NATS_URL'];
    if (!natsUrl) {
      const port = await choosePort(options.ports.nats, 'NATS');
      log(`starting nats-server (JetStream) on 127.0.0.1:${port}`);
      const nats = await startNatsServer({
        storeDir: path.join(options.dataDir, 'nats'),
        port,
        log: logSink(options, 'nats'),
      });
      stoppers.push(() => nats.stop());
      natsUrl = nats.url;
    }

    const certificate =
      options.env['TLS_CERT_FILE'] && options.env['TLS_KEY_FILE']
        ? { certPath: options.env['TLS_CERT_FILE'], keyPath: options.env['TLS_KEY_FILE'] }
        : await ensureDevCertificate(path.join(options.dataDir, 'tls'));
    const httpsPort = await choosePort(options.ports.https, 'HTTPS');
    const smtpPort = await choosePort(options.ports.smtp ?? 'any', 'SMTP submission');
    const mxPort = await choosePort(options.ports.smtpMx ?? 'any', 'SMTP MX');

    const serviceEnv: NodeJS.ProcessEnv = {
      ...options.env,
      ...options.serviceEnv,
      DKIM_ENCRYPTION_KEY: encryptionKey(options, 'DKIM_ENCRYPTION_KEY'),
      WEBHOOK_SECRET_ENCRYPTION_KEY: encryptionKey(options, 'WEBHOOK_SECRET_ENCRYPTION_KEY'),
      SMTP_PASSWORD_ENCRYPTION_KEY: encryptionKey(options, 'SMTP_PASSWORD_ENCRYPTION_KEY'),
      ROUTE_SECRET_ENCRYPTION_KEY: encryptionKey(options, 'ROUTE_SECRET_ENCRYPTION_KEY'),
      TRACKING_SECRET: trackingSecret(options),
      // Tracking links point at this platform's gateway unless told otherwise.
      TRACKING_BASE_URL:
        options.serviceEnv?.['TRACKING_BASE_URL'] ??
        options.env['TRACKING_BASE_URL'] ??
        `https://localhost:${httpsPort}`,
      // Development and tests: webhooks may target plain http:// listeners on this machine.
      OUTBOUND_ALLOW_HTTP:
        options.serviceEnv?.['OUTBOUND_ALLOW_HTTP'] ?? options.env['OUTBOUND_ALLOW_HTTP'] ?? 'true',
      OUTBOUND_ALLOW_CIDRS:
        options.serviceEnv?.['OUTBOUND_ALLOW_CIDRS'] ??
        options.env['OUTBOUND_ALLOW_CIDRS'] ??
        '127.0.0.0/8,::1/128',
      DATABASE_URL: databaseUrl,
      NATS_URL: natsUrl,
      TLS_CERT_FILE: certificate.certPath,
      TLS_KEY_FILE: certificate.keyPath,
      HTTPS_PORT: String(httpsPort),
      SMTP_HOST: SMTP_HOST,
      SMTP_SUBMISSION_PORTS: String(smtpPort),
      SMTP_MX_PORT: String(mxPort),
      // Delivery signs bounces with it and the MX takes them: one value for both.
      RETURN_PATH_TARGET: setting(options, 'RETURN_PATH_TARGET') ?? DEFAULT_BOUNCE_DOMAIN,
      SMTP_TLS_CERT_FILE: certificate.certPath,
      SMTP_TLS_KEY_FILE: certificate.keyPath,
    };

    for (const service of PLATFORM_SERVICES.filter((candidate) => candidate.migrations)) {
      log(`migrating ${service.name}`);
      await runToCompletion(
        process.execPath,
        [path.join(options.distDir, 'apps', service.name, 'src', 'migrate.js')],
        serviceEnv,
      );
    }

    const health: Record<string, string> = {};
    for (const service of PLATFORM_SERVICES) {
      log(`starting ${service.name}`);
      const healthPort = await findFreePort();
      const child = startProcess(
        service.name,
        process.execPath,
        [
          '--enable-source-maps',
          ...cpuProfileArgs(service.name),
          path.join(options.distDir, 'apps', service.name, 'src', 'main.js'),
        ],
        {
          env: { ...serviceEnv, HEALTH_HOST, HEALTH_PORT: String(healthPort) },
          log: logSink(options, service.name),
        },
      );
      services.push(child);
      await waitForSignal(child, READY_SIGNAL, 60_000);
      health[service.name] = `http://${HEALTH_HOST}:${healthPort}`;
    }

    return {
      baseUrl: `https://127.0.0.1:${httpsPort}`,
      httpsPort,
      databaseUrl,
      natsUrl,
      certificate,
      smtpSubmission: { host: SMTP_HOST, port: smtpPort },
      smtpMx: { host: SMTP_HOST, port: mxPort, feedback_address: feedbackAddress(serviceEnv) },
      services,
      health,
      serviceEnv,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * `--cpu-prof` for the services named in CPU_PROFILE_SERVICES (comma list), written to
 * CPU_PROFILE_DIR when the service exits: how a benchmark's service is profiled.
 */
function cpuProfileArgs(serviceName: string): string[] {
  const directory = process.env['CPU_PROFILE_DIR'];
  const names = (process.env['CPU_PROFILE_SERVICES'] ?? '').split(',').map((name) => name.trim());
  if (!directory || !names.includes(serviceName)) return [];
  return ['--cpu-prof', `--cpu-prof-dir=${directory}`, `--cpu-prof-name=${serviceName}.cpuprofile`];
}
