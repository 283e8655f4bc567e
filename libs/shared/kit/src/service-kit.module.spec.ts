import { streamSubject } from '@envoi/contracts-core';
import { MicroserviceEnv } from '@envoi/shared-config';
import { NatsModule, StreamConsumersModule } from '@envoi/shared-nats';
import { deliveryStreamDefinition, OutboxModule } from '@envoi/shared-outbox';
import type { DynamicModule } from '@nestjs/common';

import { ServiceKitModule } from './service-kit.module';

class ExampleConfig extends MicroserviceEnv {
  OUTBOX_RELAY_INTERVAL_MS = 250;
  OUTBOX_RELAY_BATCH = 7;
}

function exampleConfig(): ExampleConfig {
  return Object.assign(new ExampleConfig(), {
    NATS_URL: 'nats://127.0.0.1:4222',
    DATABASE_URL: 'postgres://envoi@127.0.0.1:5432/envoi',
  });
}

const dataSource = (url: string, poolSize?: number) => ({
  type: 'postgres' as const,
  url,
  ...(poolSize === undefined ? {} : { poolSize }),
});

function importedModules(module: DynamicModule): unknown[] {
  return (module.imports ?? []).map((entry) =>
    typeof entry === 'object' && entry !== null && 'module' in entry ? entry.module : entry,
  );
}

describe('ServiceKitModule', () => {
  it('provides the config under its class, globally, with the database and the bus', () => {
    const config = exampleConfig();
    const kit = ServiceKitModule.forRoot({ service: 'example', config, dataSource });
    expect(kit.global).toBe(true);
    expect(kit.providers).toEqual([{ provide: ExampleConfig, useValue: config }]);
    expect(kit.exports).toEqual(kit.providers);
    const imported = importedModules(kit);
    expect(imported).toContain(NatsModule);
    expect(imported).not.toContain(OutboxModule);
    expect(imported).not.toContain(StreamConsumersModule);
  });

  it('adds the outbox relay paced by the OUTBOX_* settings and the declared consumers', () => {
    const config = exampleConfig();
    const subject = streamSubject<unknown>('events.example.happened.v1');
    const kit = ServiceKitModule.forRoot({
      service: 'example',
      config,
      dataSource,
      outbox: { settings: config, streams: [deliveryStreamDefinition()] },
      consumes: [subject],
    });
    const outbox = (kit.imports ?? []).find(
      (entry): entry is DynamicModule =>
        typeof entry === 'object' &&
        entry !== null &&
        'module' in entry &&
        entry.module === OutboxModule,
    );
    const relayOptions = (outbox?.providers ?? []).flatMap((provider) =>
      typeof provider === 'object' && 'useValue' in provider ? [provider.useValue as unknown] : [],
    );
    expect(relayOptions).toEqual([
      expect.objectContaining({
        intervalMs: 250,
        batchSize: 7,
        streams: [deliveryStreamDefinition()],
      }),
    ]);
    expect(importedModules(kit)).toContain(StreamConsumersModule);
  });
});
