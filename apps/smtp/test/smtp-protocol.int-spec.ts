import net from 'node:net';

import { SMTP_LOGIN_FIELD_MAX } from '@envoi/contracts-accounts';

import { MAX_AUTH_LINE_OCTETS } from '../src/submission/command-guard';
import { useSmtpRig } from './smtp-test-app';
import { SmtpWireClient } from './smtp-wire-client';

/** How long smtp-server waits for an early talker before its banner. */
const GREETING_WAIT_MS = 10_000;

async function greeted(
  port: number,
  options: { implicitTls?: boolean } = {},
): Promise<SmtpWireClient> {
  const client = await SmtpWireClient.connect(port, options);
  const banner = await client.reply(GREETING_WAIT_MS);
  expect(banner.code).toBe(220);
  return client;
}

/**
 * The submission server's protocol rules that hold before any login (reliability plan 31-40),
 * against the real server from dist/ over raw sockets.
 */
describe('smtp submission protocol', () => {
  const rig = useSmtpRig();
  const clients: SmtpWireClient[] = [];
  const open = async (options: { implicitTls?: boolean } = {}) => {
    const client = await greeted(options.implicitTls ? rig().implicitTlsPort : rig().port, options);
    clients.push(client);
    return client;
  };
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  it('offers STARTTLS and not AUTH before TLS, and refuses AUTH sent anyway with 538 5.7.11', async () => {
    const client = await open();
    const ehlo = await client.command('EHLO client.example');
    expect(ehlo.code).toBe(250);
    expect(ehlo.lines.some((line) => line.includes('STARTTLS'))).toBe(true);
    expect(ehlo.lines.some((line) => line.includes('AUTH'))).toBe(false);
    expect(ehlo.lines.some((line) => line.includes('SIZE 65536'))).toBe(true);
    const auth = await client.command('AUTH PLAIN AHVzZXIAcGFzcw==');
    expect(auth.text).toMatch(/^538 5\.7\.11 /);
  });

  it('offers AUTH PLAIN LOGIN after STARTTLS and refuses an unknown mechanism with 504 5.5.4', async () => {
    const client = await open();
    const ehlo = await client.startTls();
    expect(ehlo.lines.some((line) => /AUTH PLAIN LOGIN$/.test(line))).toBe(true);
    expect(ehlo.lines.some((line) => line.includes('STARTTLS'))).toBe(false);
    const auth = await client.command('AUTH CRAM-MD5');
    expect(auth.text).toMatch(/^504 5\.5\.4 /);
  });

  it('offers AUTH at once on the implicit TLS port', async () => {
    const client = await open({ implicitTls: true });
    const ehlo = await client.command('EHLO client.example');
    expect(ehlo.lines.some((line) => /AUTH PLAIN LOGIN$/.test(line))).toBe(true);
  });

  it('refuses MAIL before AUTH with 530 5.7.0, before and after TLS', async () => {
    const client = await open();
    await client.command('EHLO client.example');
    expect((await client.command('MAIL FROM:<a@example.com>')).text).toMatch(/^530 5\.7\.0 /);
    await client.command('STARTTLS');
    await client.upgrade();
    await client.command('EHLO client.example');
    expect((await client.command('MAIL FROM:<a@example.com>')).text).toMatch(/^530 5\.7\.0 /);
  });

  it('discards commands pipelined after STARTTLS (CVE-2011-0411) and wants EHLO again', async () => {
    const client = await open();
    await client.command('EHLO client.example');
    client.write('STARTTLS\r\nEHLO injected.example\r\nNOOP\r\n');
    expect((await client.reply()).code).toBe(220);
    await client.upgrade();
    // Nothing of the plaintext tail was answered: the first reply over TLS is to this command.
    const mail = await client.command('MAIL FROM:<a@example.com>');
    expect(mail.text).toMatch(/^503 /);
    const noop = await client.command('NOOP');
    expect(noop.code).toBe(250);
  });

  it('answers BDAT with 502 5.5.1 (no CHUNKING)', async () => {
    const client = await open();
    const ehlo = await client.command('EHLO client.example');
    expect(ehlo.lines.some((line) => line.includes('CHUNKING'))).toBe(false);
    expect((await client.command('BDAT 10 LAST')).text).toMatch(/^502 5\.5\.1 /);
  });

  it('drops a client that talks before the banner', async () => {
    const socket = net.connect({ host: '127.0.0.1', port: rig().port });
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('EHLO early.example\r\n');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('not dropped')), GREETING_WAIT_MS);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const text = Buffer.concat(received).toString('latin1');
    expect(text).not.toMatch(/^220 /);
    expect(text).toMatch(/^554 5\.5\.1 /);
  });

  it('takes a command line of 512 octets and refuses one over with 500 5.5.2 and closes', async () => {
    const client = await open();
    await client.command('EHLO client.example');
    const longest = `NOOP ${'x'.repeat(512 - 'NOOP '.length - 2)}`;
    expect((await client.command(longest)).code).toBe(250);
    const reply = await client.command(`${longest}x`);
    expect(reply.text).toMatch(/^500 5\.5\.2 /);
    await client.waitClosed();
  });

  it('takes AUTH lines over 512 octets up to the credential field limits', async () => {
    const client = await open();
    await client.startTls();
    const field = 'u'.repeat(SMTP_LOGIN_FIELD_MAX);
    const plain = Buffer.from(`${field}\0${field}\0${field}`).toString('base64');
    // No accounts service runs beside this rig: a login that reaches verification is answered 454.
    expect((await client.command(`AUTH PLAIN ${plain}`)).text).toMatch(/^454 4\.7\.0 /);
    expect((await client.command('AUTH LOGIN')).code).toBe(334);
    const username = Buffer.from(field.repeat(2)).toString('base64');
    expect(username.length).toBeGreaterThan(512);
    expect((await client.command(username)).code).toBe(334);
  });

  it('refuses an AUTH line over the credential field limits with 500 5.5.2', async () => {
    const client = await open();
    await client.startTls();
    const reply = await client.command(`AUTH PLAIN ${'A'.repeat(MAX_AUTH_LINE_OCTETS)}`);
    expect(reply.text).toMatch(/^500 5\.5\.2 /);
    await client.waitClosed();
  });

  it('closes an idle connection with 421 4.4.2', async () => {
    const client = await open();
    const reply = await client.reply(10_000);
    expect(reply.text).toMatch(/^421 4\.4\.2 /);
    await client.waitClosed();
  });

  it('refuses connections over the per-IP limit with 421 4.7.0, and admits again once they close', async () => {
    const admitted = [await open(), await open(), await open()];
    const refused = await SmtpWireClient.connect(rig().port);
    clients.push(refused);
    expect((await refused.reply(GREETING_WAIT_MS)).text).toMatch(/^421 4\.7\.0 /);
    await refused.waitClosed();
    for (const client of admitted) {
      await client.command('QUIT');
      await client.waitClosed();
    }
    const again = await open();
    expect((await again.command('NOOP')).code).toBe(250);
  });
});
