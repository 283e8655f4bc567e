import { PLATFORM_SERVICES, type PlatformService } from '@envoi/shared-infra';
import { pollUntil } from '@envoi/shared-testing';

import { e2eEnvironment } from '../support/environment';
import { allAnswer, getHealth, readinessByService } from '../support/health';

/** Every service of the platform serves `/healthz` and `/readyz` on its own health port. */
describe('health endpoints', () => {
  const { health } = e2eEnvironment();

  it('has a health port for every service', () => {
    expect(Object.keys(health).sort()).toEqual(PLATFORM_SERVICES.map((s) => s.name).sort());
  });

  // A service without a database (the smtp edge) checks NATS only; it consumes no streams.
  const expectedChecks = (service: PlatformService): Record<string, string> =>
    service.migrations ? { database: 'ok', nats: 'ok', consumers: 'ok' } : { nats: 'ok' };

  it.each(PLATFORM_SERVICES.map((s) => [s.name, s] as const))(
    'reports %s alive and ready',
    async (name, service) => {
      const url = health[name] ?? '';
      await expect(getHealth(url, '/healthz')).resolves.toEqual({
        status: 200,
        body: { status: 'ok' },
      });
      // Ready once its consumers are attached (they wait for the streams after boot).
      const statuses = await pollUntil(() => readinessByService({ [name]: url }), allAnswer(200), {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: `${name} to be ready`,
      });
      expect(statuses).toEqual({ [name]: 200 });
      await expect(getHealth(url, '/readyz')).resolves.toEqual({
        status: 200,
        body: { status: 'ready', checks: expectedChecks(service) },
      });
    },
  );
});
