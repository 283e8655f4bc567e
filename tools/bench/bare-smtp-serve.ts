import { READY_SIGNAL } from '@envoi/shared-observability';
import type { SMTPServer } from 'smtp-server';

/**
 * Serves a bare sink's smtp-server on loopback, announces readiness over IPC, and closes it then
 * exits on SIGTERM or SIGINT (after `beforeClose`, once).
 */
export async function serveBareSmtp(
  server: SMTPServer,
  port: number,
  beforeClose: () => void = () => undefined,
): Promise<void> {
  server.on('error', (error) => console.error(error));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  process.send?.(READY_SIGNAL);

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    beforeClose();
    server.close(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
