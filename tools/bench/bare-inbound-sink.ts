import { randomUUID } from 'node:crypto';
import https from 'node:https';

import { signedHeaders } from '@envoi/shared-outbound';
import { type AddressObject, type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

import { serveBareSmtp } from './bare-smtp-serve';
import { benchServerEnv } from './bench-server-env';

/**
 * The bare building block of the inbound benchmark: a plain smtp-server with the platform's
 * certificate (STARTTLS, no AUTH, as an MX) that parses each message (mailparser's simpleParser),
 * signs a JSON body of its fields as webhooks are signed and POSTs it to BENCH_ROUTE_URL over a
 * keep-alive HTTPS agent trusting the platform's certificate, then answers 250. It stores
 * nothing and never retries. It runs as its own process (started by inbound-throughput.ts).
 */
const POST_TIMEOUT_MS = 30_000;

function addresses(value: AddressObject | AddressObject[] | undefined): string {
  if (value === undefined) return '';
  return (Array.isArray(value) ? value : [value]).map((entry) => entry.text).join(', ');
}

function payload(mail: ParsedMail, size: number): string {
  return JSON.stringify({
    type: 'message.routing',
    route_id: 'bare',
    timestamp: new Date().toISOString(),
    data: {
      id: randomUUID(),
      from: mail.from?.text ?? '',
      to: addresses(mail.to),
      subject: mail.subject ?? '',
      message_id: mail.messageId ?? '',
      size,
      html_body: typeof mail.html === 'string' ? mail.html : '',
      plain_body: mail.text ?? '',
    },
  });
}

function post(agent: https.Agent, url: URL, secret: string, body: string): Promise<void> {
  const headers = signedHeaders(secret, randomUUID(), Math.floor(Date.now() / 1000), body);
  return new Promise((resolve, reject) => {
    const request = https.request(
      url,
      { method: 'POST', agent, headers: { ...headers }, timeout: POST_TIMEOUT_MS },
      (response) => {
        response.resume();
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve();
          else reject(new Error(`the route URL answered ${status}`));
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error('the route URL timed out')));
    request.on('error', reject);
    request.end(body);
  });
}

async function main(): Promise<void> {
  const { key, cert, port } = benchServerEnv();
  const routeUrl = new URL(process.env['BENCH_ROUTE_URL'] ?? '');
  const secret = process.env['BENCH_ROUTE_SECRET'] ?? '';
  if (secret === '') throw new Error('BENCH_ROUTE_SECRET is required');
  const agent = new https.Agent({ keepAlive: true, ca: cert, servername: 'localhost' });
  const server = new SMTPServer({
    key,
    cert,
    name: 'bare-inbound-sink',
    authOptional: true,
    disabledCommands: ['AUTH'],
    disableReverseLookup: true,
    hideDSN: true,
    size: 20 * 1024 * 1024,
    logger: false,
    onData: (stream, _session, done) => {
      let size = 0;
      stream.on('data', (chunk: Buffer) => (size += chunk.length));
      simpleParser(stream)
        .then((mail) => post(agent, routeUrl, secret, payload(mail, size)))
        .then(
          () => done(null, '2.0.0 Ok: posted'),
          (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
        );
    },
  });
  await serveBareSmtp(server, port, () => agent.destroy());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
