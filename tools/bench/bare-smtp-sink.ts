import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

import { serveBareSmtp } from './bare-smtp-serve';
import { BARE_SMTP_PASSWORD, BARE_SMTP_USERNAME } from './bare-smtp-sink.constants';
import { benchServerEnv } from './bench-server-env';

/**
 * The bare building block of the SMTP benchmark: a plain smtp-server with the platform's
 * certificate, STARTTLS before AUTH (PLAIN and LOGIN, one fixed login), that parses each message
 * (mailparser's simpleParser) and answers 250, storing nothing. It runs as its own process
 * (started by smtp-throughput.ts) so it never shares an event loop with the clients.
 */
async function main(): Promise<void> {
  const { key, cert, port } = benchServerEnv();
  let parsed = 0;
  const server = new SMTPServer({
    key,
    cert,
    name: 'bare-sink',
    authMethods: ['PLAIN', 'LOGIN'],
    disableReverseLookup: true,
    hideDSN: true,
    size: 20 * 1024 * 1024,
    logger: false,
    onAuth: (auth, _session, done) => {
      const valid = auth.username === BARE_SMTP_USERNAME && auth.password === BARE_SMTP_PASSWORD;
      if (valid) done(null, { user: auth.username });
      else done(new Error('Authentication credentials invalid'));
    },
    onData: (stream, _session, done) => {
      simpleParser(stream).then(
        (mail) => {
          parsed += 1;
          done(null, `2.0.0 Ok: queued as ${mail.messageId ?? String(parsed)}`);
        },
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    },
  });
  await serveBareSmtp(server, port);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
