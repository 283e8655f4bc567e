import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { CommonErrorCode, requestSubject } from '@envoi/contracts-core';
import { connect, type NatsConnection } from 'nats';

import { decodePacket, encodePacket, type NestRequestPacket } from '../src/nest-packet';
import { RpcClient } from '../src/rpc-client';

const ping = requestSubject<Record<string, never>, string>('bus-link.ping.v1');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A nats-server of this test's own, on a fixed port, so that it can be killed and restarted. */
async function startNats(port: number, storeDir: string): Promise<ChildProcess> {
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], {
    stdio: 'ignore',
  });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const up = await connect({ servers: `127.0.0.1:${port}`, reconnect: false }).then(
      (probe) => probe.close().then(() => true),
      () => false,
    );
    if (up) return child;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`nats-server did not start on ${port}`);
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Answers pings the way a Nest NATS handler does; subscribes again after every reconnect. */
function respond(connection: NatsConnection): void {
  connection.subscribe(ping.name, {
    callback: (_error, message) => {
      const packet = decodePacket<NestRequestPacket<unknown>>(message.data);
      message.respond(encodePacket({ id: packet.id, response: 'pong', isDisposed: true }));
    },
  });
}

describe('RpcClient while the bus is down', () => {
  const storeDir = mkdtempSync(path.join(os.tmpdir(), 'envoi-bus-link-'));
  let server: ChildProcess | undefined;
  let client: NatsConnection | undefined;
  let responder: NatsConnection | undefined;

  afterAll(async () => {
    await client?.close();
    await responder?.close();
    if (server) await kill(server);
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('fails fast with unavailable while disconnected, and works again once reconnected', async () => {
    const port = await freePort();
    server = await startNats(port, storeDir);
    const options = {
      servers: `127.0.0.1:${port}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 100,
    };
    client = await connect(options);
    responder = await connect(options);
    respond(responder);
    const rpc = new RpcClient(client, 5_000);
    await expect(rpc.request(ping, {})).resolves.toBe('pong');

    await kill(server);
    let refusal: unknown;
    for (let tries = 0; tries < 100 && refusal === undefined; tries++) {
      const started = Date.now();
      refusal = await rpc.request(ping, {}, { timeoutMs: 2_000 }).then(
        () => undefined,
        (error: unknown) => (Date.now() - started < 1_000 ? error : undefined),
      );
      if (refusal === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(refusal).toMatchObject({
      code: CommonErrorCode.Unavailable,
      message: `${ping.name}: not connected to the bus`,
    });

    server = await startNats(port, storeDir);
    let answer: string | undefined;
    for (let tries = 0; tries < 100 && answer === undefined; tries++) {
      answer = await rpc.request(ping, {}, { timeoutMs: 1_000 }).catch(() => undefined);
      if (answer === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(answer).toBe('pong');
  }, 60_000);
});
