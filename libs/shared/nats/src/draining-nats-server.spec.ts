import { DrainingNatsServer } from './draining-nats-server';

describe('DrainingNatsServer.getHandlerByPattern', () => {
  const server = new DrainingNatsServer({ servers: ['nats://127.0.0.1:4222'] }, 0);
  const send = () => Promise.resolve('sent');
  const legacy = () => Promise.resolve('legacy');
  server.addHandler('messages.send', send);
  server.addHandler({ cmd: 'legacy' }, legacy);

  afterEach(() => jest.restoreAllMocks());

  it('finds a subscribed channel by its key without parsing it as JSON', () => {
    const parse = jest.spyOn(JSON, 'parse');
    expect(server.getHandlerByPattern('messages.send')).toBe(send);
    expect(parse).not.toHaveBeenCalled();
  });

  it('looks up other patterns as Nest does', () => {
    expect(server.getHandlerByPattern('{"cmd":"legacy"}')).toBe(legacy);
    expect(server.getHandlerByPattern('messages.unknown')).toBeNull();
  });
});
