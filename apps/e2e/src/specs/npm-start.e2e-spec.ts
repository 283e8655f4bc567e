import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { findStablePorts, isPortOpen, PLATFORM_SERVICES } from '@envoi/shared-infra';
import { pollUntil } from '@envoi/shared-testing';

import { allAnswer, getHealth, readinessByService } from '../support/health';

const ROOT = path.resolve(__dirname, '../../../..');
const START = path.join(ROOT, 'dist/tools/start/main.js');
const ADMIN = path.join(ROOT, 'dist/tools/admin/main.js');

interface Started {
  child: ChildProcess;
  output: () => string;
}

function get(url: string, key: string, ca: Buffer): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    https
      .get(
        url,
        { ca, headers: { authorization: `Bearer ${key}` }, servername: 'localhost' },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as unknown }),
          );
        },
      )
      .on('error', reject);
  });
}

/** The first line the SMTP submission port sends. */
function smtpBanner(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(10_000, () => socket.destroy(new Error('no SMTP banner')));
    socket.once('data', (chunk: Buffer) => {
      socket.end();
      resolve(chunk.toString('latin1'));
    });
    socket.once('error', reject);
  });
}

/** `npm start` as a newcomer runs it: own data directory and ports, no DATABASE_URL or NATS_URL. */
describe('npm start', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let httpsPort: number;
  let smtpPort: number;
  let mxPort: number;
  const running = new Set<ChildProcess>();

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'envoi-start-'));
    chmodSync(dataDir, 0o755);
    // The second start listens on the same ports again: below the ephemeral range, so that no
    // connection made meanwhile holds one as its source port.
    const [https, smtp, mx, postgres, nats] = await findStablePorts(5);
    httpsPort = https ?? 0;
    smtpPort = smtp ?? 0;
    mxPort = mx ?? 0;
    env = {
      ...process.env,
      DATABASE_URL: '',
      NATS_URL: '',
      ENVOI_DATA_DIR: dataDir,
      ENVOI_POSTGRES_PORT: String(postgres),
      ENVOI_NATS_PORT: String(nats),
      HTTPS_PORT: String(httpsPort),
      ENVOI_SMTP_PORT: String(smtpPort),
      ENVOI_SMTP_MX_PORT: String(mxPort),
      LOG_LEVEL: 'warn',
    };
  });

  afterAll(async () => {
    // A failed assertion must not leave a platform running: Ctrl-C whatever is still up.
    await Promise.all(
      [...running].map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once('exit', () => resolve());
            child.kill('SIGINT');
          }),
      ),
    );
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<Started> {
    const child = spawn(process.execPath, [START], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    child.once('exit', () => running.delete(child));
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await pollUntil(
      () => output,
      (text) => text.includes('Envoi is running') || child.exitCode !== null,
      { timeoutMs: 90_000, intervalMs: 200, what: 'npm start to print its banner' },
    );
    if (child.exitCode !== null) throw new Error(`start exited early:\n${output}`);
    return { child, output: () => output };
  }

  async function stopWithCtrlC(started: Started): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => started.child.once('exit', resolve));
    started.child.kill('SIGINT');
    return exited;
  }

  function admin(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(process.execPath, [ADMIN, ...args], { env }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      );
    });
  }

  it('prints a working key, onboards accounts with the admin command, stops on Ctrl-C and reuses its data', async () => {
    const first = await start();
    const saved = JSON.parse(readFileSync(path.join(dataDir, 'dev-account.json'), 'utf8')) as {
      base_url: string;
      account_id: string;
      api_key: string;
      health: Record<string, string>;
      smtp_submission: { host: string; port: number };
      smtp_mx: { host: string; port: number; feedback_address: string };
    };
    expect(saved.base_url).toBe(`https://127.0.0.1:${httpsPort}`);
    expect(saved.smtp_submission).toEqual({ host: '127.0.0.1', port: smtpPort });
    expect(await smtpBanner(smtpPort)).toMatch(/^220 /);
    expect(saved.smtp_mx).toEqual({
      host: '127.0.0.1',
      port: mxPort,
      feedback_address: 'fbl@bounces.envoi.test',
    });
    expect(await smtpBanner(mxPort)).toMatch(/^220 .*MX/);
    expect(first.output()).toContain(`SMTP MX:        127.0.0.1:${mxPort}`);
    expect(Object.keys(saved.health).sort()).toEqual(PLATFORM_SERVICES.map((s) => s.name).sort());
    for (const url of Object.values(saved.health)) {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+$/);
      await expect(getHealth(url, '/healthz')).resolves.toMatchObject({ status: 200 });
    }
    await pollUntil(() => readinessByService(saved.health), allAnswer(200), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'every service to be ready',
    });
    expect(saved.api_key).toMatch(/^envoi-sk-[A-Za-z0-9]{64}$/);
    const printedKey = /API key:\s+(envoi-sk-\S+)/.exec(first.output())?.[1];
    expect(printedKey).toBe(saved.api_key);
    expect(first.output()).toContain(saved.account_id);

    const ca = readFileSync(path.join(dataDir, 'tls/cert.pem'));
    expect(await get(`${saved.base_url}/v2/ping`, saved.api_key, ca)).toEqual({
      status: 200,
      body: { message: 'pong' },
    });
    const account = await get(
      `${saved.base_url}/v2/accounts/${saved.account_id}`,
      saved.api_key,
      ca,
    );
    expect(account.status).toBe(200);

    const onboarded = JSON.parse(
      await admin(['accounts', 'create', '--name', 'Acme Inc', '--json']),
    ) as {
      account_id: string;
      api_key: string;
    };
    expect(Object.keys(onboarded).sort()).toEqual(['account_id', 'api_key']);
    const acme = await get(
      `${saved.base_url}/v2/accounts/${onboarded.account_id}`,
      onboarded.api_key,
      ca,
    );
    expect(acme).toMatchObject({
      status: 200,
      body: { id: onboarded.account_id, name: 'Acme Inc' },
    });

    expect(await stopWithCtrlC(first)).toBe(0);
    expect(await isPortOpen(httpsPort)).toBe(false);
    expect(await isPortOpen(Number(env['ENVOI_POSTGRES_PORT']))).toBe(false);
    expect(await isPortOpen(Number(env['ENVOI_NATS_PORT']))).toBe(false);

    const second = await start();
    try {
      expect(second.output()).toContain(saved.account_id);
      expect(await get(`${saved.base_url}/v2/ping`, onboarded.api_key, ca)).toMatchObject({
        status: 200,
      });
      expect(await get(`${saved.base_url}/v2/ping`, saved.api_key, ca)).toMatchObject({
        status: 200,
      });
    } finally {
      expect(await stopWithCtrlC(second)).toBe(0);
    }
  }, 240_000);

  it('explains how to use the admin command when the arguments are wrong', async () => {
    await expect(admin(['accounts', 'create'])).rejects.toThrow(/--name is required[\s\S]*Usage/);
  });
});
