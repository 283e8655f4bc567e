import { randomBytes } from 'node:crypto';

import { eventSubject, requestSubject } from '@envoi/contracts-core';
import { Controller, type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { connect, type NatsConnection } from 'nats';

import { RpcClient } from '../src/rpc-client';
import { natsMicroserviceOptions } from '../src/service-transport';
import { eventually } from './eventually';

interface Work {
  n: number;
}

const id = randomBytes(4).toString('hex');
const SERVICE = `shutdown-test-${id}`;
const slowWork = requestSubject<Work, Work>(`st${id}.work.slow.v1`);
const ping = requestSubject<Record<string, never>, { pong: boolean }>(`st${id}.work.ping.v1`);
const workHappened = eventSubject<Work>(`st${id}.work.happened.v1`);

/** Holds the slow handlers until the test opens it. */
class Gate {
  entered = 0;
  finished = 0;
  private opened!: Promise<void>;
  private openFn!: () => void;

  constructor() {
    this.reset();
  }

  reset(): void {
    this.entered = 0;
    this.finished = 0;
    this.opened = new Promise((resolve) => (this.openFn = resolve));
  }

  async pass(): Promise<void> {
    this.entered += 1;
    await this.opened;
    this.finished += 1;
  }

  open(): void {
    this.openFn();
  }
}

const gate = new Gate();

@Controller()
class WorkController {
  @MessagePattern(slowWork.name)
  async slow(@Payload() work: Work): Promise<Work> {
    await gate.pass();
    return { n: work.n };
  }

  @MessagePattern(ping.name)
  ping(): { pong: boolean } {
    return { pong: true };
  }

  @EventPattern(workHappened.name)
  async happened(): Promise<void> {
    await gate.pass();
  }
}

@Module({ controllers: [WorkController] })
class WorkModule {}

describe('service shutdown (real nats-server)', () => {
  const servers = (process.env['NATS_URL'] ?? '').split(',');
  let connection: NatsConnection;
  let rpc: RpcClient;
  let app: INestMicroservice | undefined;

  beforeAll(async () => {
    connection = await connect({ servers });
    rpc = new RpcClient(connection, 10_000);
  });

  beforeEach(() => gate.reset());

  afterEach(async () => {
    gate.open();
    await app?.close();
    app = undefined;
  });

  afterAll(async () => {
    await connection.drain();
  });

  async function startService(gracePeriodMs: number): Promise<INestMicroservice> {
    app = await NestFactory.createMicroservice(WorkModule, {
      ...natsMicroserviceOptions(SERVICE, servers, gracePeriodMs),
      logger: false,
    });
    await app.listen();
    await expect(rpc.request(ping, {})).resolves.toEqual({ pong: true });
    return app;
  }

  /** True once the service has left its queue group (a request finds no responder). */
  async function leftQueueGroup(): Promise<boolean> {
    return rpc.request(ping, {}, { timeoutMs: 1_000 }).then(
      () => false,
      (error: Error) => error.message.includes('no responders'),
    );
  }

  function closeInBackground(service: INestMicroservice): {
    closing: Promise<void>;
    isClosed: () => boolean;
  } {
    let closed = false;
    const closing = service.close().then(() => {
      closed = true;
    });
    return { closing, isClosed: () => closed };
  }

  it('closes an idle service at once instead of waiting out its grace period', async () => {
    const service = await startService(10_000);

    const started = Date.now();
    await service.close();

    // Half the grace period: what waits it out takes 10 s.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('replies to a request in flight when shutdown begins, then closes', async () => {
    const service = await startService(10_000);
    const reply = rpc
      .request(slowWork, { n: 7 }, { timeoutMs: 20_000 })
      .catch((error: Error) => error.message);
    await eventually(() => gate.entered === 1, 'the handler to start');

    const { closing, isClosed } = closeInBackground(service);
    await eventually(leftQueueGroup, 'the service to stop taking requests');
    expect(isClosed()).toBe(false);

    gate.open();
    await expect(reply).resolves.toEqual({ n: 7 });
    await expect(closing).resolves.toBeUndefined();
  });

  it('lets an event handler in flight finish before closing', async () => {
    const service = await startService(10_000);
    rpc.emit(workHappened, { n: 1 });
    await eventually(() => gate.entered === 1, 'the event handler to start');

    const { closing, isClosed } = closeInBackground(service);
    await eventually(leftQueueGroup, 'the service to stop taking requests');
    expect(isClosed()).toBe(false);

    gate.open();
    await closing;
    expect(gate.finished).toBe(1);
  });

  it('stops waiting for handlers once the grace period is over', async () => {
    const service = await startService(300);
    const reply = rpc.request(slowWork, { n: 1 }, { timeoutMs: 2_000 }).catch(() => 'no reply');
    await eventually(() => gate.entered === 1, 'the handler to start');

    const started = Date.now();
    await service.close();

    // The handler never ends on its own: only the 300 ms grace period can end the close.
    expect(Date.now() - started).toBeLessThan(5_000);
    gate.open();
    await expect(reply).resolves.toBe('no reply');
  });
});
