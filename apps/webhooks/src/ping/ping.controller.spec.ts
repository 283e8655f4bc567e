import { PingController } from './ping.controller';

describe('PingController', () => {
  it('answers with the service name and a greeting', () => {
    expect(new PingController().ping({ name: 'tests' })).toEqual({
      service: 'webhooks',
      message: 'hello tests',
    });
  });
});
