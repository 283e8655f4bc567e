import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import nodemailer from 'nodemailer';

import { e2eEnvironment } from './environment';

const QUEUED = /250 2\.0\.0 Ok: queued as ([0-9a-f-]{36})/;
const CLIENT_TIMEOUT_MS = 30_000;

/** The real SMTP clients the specs deliver with. */
export type MxClientName = 'nodemailer' | 'swaks';

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: CLIENT_TIMEOUT_MS }, (error, stdout, stderr) =>
      error
        ? reject(new Error(`${command}: ${error.message}\n${stdout}\n${stderr}`))
        : resolve(stdout),
    );
  });
}

/**
 * Delivers `raw` to the MX (the e2e platform's unless `mx` says another) over STARTTLS, from the
 * null sender by default; the inbound id of its 250.
 */
export async function deliverToMx(
  client: MxClientName,
  to: string | string[],
  raw: string,
  from = '',
  mx: { host: string; port: number } = e2eEnvironment().smtpMx,
): Promise<string> {
  const { host, port } = mx;
  const recipients = ([] as string[]).concat(to);
  let transcript: string;
  if (client === 'nodemailer') {
    const transport = nodemailer.createTransport({
      host,
      port,
      secure: false,
      requireTLS: true,
      tls: { ca: readFileSync(e2eEnvironment().caFile), servername: 'localhost' },
    });
    try {
      transcript = (await transport.sendMail({ envelope: { from, to: recipients }, raw })).response;
    } finally {
      transport.close();
    }
  } else {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'envoi-mx-e2e-'));
    try {
      const file = path.join(dir, 'message.eml');
      // swaks ends the data with a CRLF of its own.
      writeFileSync(file, raw.replace(/\r\n$/, ''));
      transcript = await run('swaks', [
        '--server',
        host,
        '--port',
        String(port),
        '--tls',
        '--tls-verify',
        '--tls-ca-path',
        e2eEnvironment().caFile,
        '--tls-sni',
        'localhost',
        '--from',
        from || '<>',
        '--to',
        recipients.join(','),
        '--data',
        file,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const queued = QUEUED.exec(transcript);
  if (!queued?.[1]) throw new Error(`${client}: no 250 with an inbound id in\n${transcript}`);
  return queued[1];
}
