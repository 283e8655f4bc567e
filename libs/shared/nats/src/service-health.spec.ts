import type { NatsConnection } from 'nats';

import { trackConsumer } from './consumer-attachments';
import { consumersCheck, natsCheck } from './service-health';

describe('consumersCheck', () => {
  it('passes with no consumer declared, and names each one not attached', async () => {
    const connection = {} as NatsConnection;
    const check = consumersCheck(connection);
    await expect(Promise.resolve(check())).resolves.toBeUndefined();
    let eventsAttached = false;
    trackConsumer(connection, { name: 'events', attached: () => eventsAttached });
    trackConsumer(connection, { name: 'jobs', attached: () => false });
    trackConsumer(connection, { name: 'other', attached: () => true });
    expect(() => check()).toThrow('not attached: events, jobs');
    eventsAttached = true;
    expect(() => check()).toThrow('not attached: jobs');
  });

  it('sees only the consumers of its own connection', () => {
    const mine = {} as NatsConnection;
    trackConsumer({} as NatsConnection, { name: 'elsewhere', attached: () => false });
    expect(() => consumersCheck(mine)()).not.toThrow();
  });
});

describe('natsCheck', () => {
  it('fails on a closed connection and on a missed round trip', async () => {
    const closed = { isClosed: () => true } as unknown as NatsConnection;
    await expect(natsCheck(closed)()).rejects.toThrow('connection closed');
    const disconnected = {
      isClosed: () => false,
      rtt: () => Promise.reject(new Error('DISCONNECT')),
    } as unknown as NatsConnection;
    await expect(natsCheck(disconnected)()).rejects.toThrow('not connected (DISCONNECT)');
  });
});
