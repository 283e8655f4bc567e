import { Readiness } from './readiness';

describe('Readiness', () => {
  it('is ready when every check passes, naming each', async () => {
    const readiness = new Readiness()
      .register('database', () => Promise.resolve())
      .register('nats', () => undefined);
    await expect(readiness.evaluate()).resolves.toEqual({
      ready: true,
      checks: { database: 'ok', nats: 'ok' },
    });
  });

  it('is not ready when a check throws, and says why', async () => {
    const readiness = new Readiness()
      .register('database', () => Promise.reject(new Error('connection refused')))
      .register('nats', () => undefined);
    await expect(readiness.evaluate()).resolves.toEqual({
      ready: false,
      checks: { database: 'connection refused', nats: 'ok' },
    });
  });

  it('fails a check that does not answer within the timeout', async () => {
    const readiness = new Readiness(20).register('nats', () => new Promise<void>(() => undefined));
    await expect(readiness.evaluate()).resolves.toEqual({
      ready: false,
      checks: { nats: 'no answer within 20 ms' },
    });
  });

  it('runs the checks once for callers that arrive together, and again after', async () => {
    const check = jest.fn(() => Promise.resolve());
    const readiness = new Readiness().register('database', check);
    await Promise.all([readiness.evaluate(), readiness.evaluate()]);
    expect(check).toHaveBeenCalledTimes(1);
    await readiness.evaluate();
    expect(check).toHaveBeenCalledTimes(2);
  });

  it('is not ready once stopping, without running the checks', async () => {
    const check = jest.fn(() => Promise.resolve());
    const readiness = new Readiness().register('database', check);
    readiness.markStopping();
    await expect(readiness.evaluate()).resolves.toEqual({
      ready: false,
      checks: { shutdown: 'stopping' },
    });
    expect(check).not.toHaveBeenCalled();
  });

  it('refuses a name registered twice', () => {
    const readiness = new Readiness().register('nats', () => undefined);
    expect(() => readiness.register('nats', () => undefined)).toThrow('registered twice');
  });
});
