import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { PLATFORM_SERVICES } from '@envoi/shared-infra';
import { parse } from 'yaml';

import { programConfigVariables } from './config-variables';

/**
 * docker/compose.yaml cannot run on the build machines (no Docker engine), so it is checked
 * against the platform here: every service of PLATFORM_SERVICES runs, every schema owner's
 * migrations run first, and every variable a service's configuration class requires is provided.
 * The required variables are read from the config classes themselves (the one each main.ts /
 * migrate.ts passes to loadConfig), so a new required setting fails this test until compose.yaml
 * provides it. The Helm chart is rendered by the real helm in helm-chart.spec.ts.
 */

const ROOT = path.resolve(__dirname, '../..');

/** Read by the logger of every process (createLogger), not by a config class. */
const LOGGER_VARIABLES = ['LOG_LEVEL'];

type Mapping = Record<string, unknown>;

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mapping(value: unknown, where: string): Mapping {
  if (!isMapping(value)) throw new Error(`${where}: expected a mapping`);
  return value;
}

function strings(value: unknown, where: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new Error(`${where}: expected a list of strings`);
  }
  return value;
}

function readYaml(file: string): unknown {
  // merge: compose.yaml shares settings through `<<: *anchor`.
  return parse(readFileSync(path.join(ROOT, file), 'utf8'), { merge: true }) as unknown;
}

/**
 * Runs a Compose healthcheck's `node -e` arguments with HEALTH_PORT pointing at a loopback server
 * that answers every request with `status`; returns the exit code and the path it asked for.
 */
async function runHealthcheck(
  args: string[],
  status: number,
): Promise<{ exitCode: number | null; path: string | undefined }> {
  let requested: string | undefined;
  const server = http.createServer((request, response) => {
    requested = request.url;
    response.writeHead(status).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const child = spawn(process.execPath, args, {
      env: { HEALTH_PORT: String(port) },
      stdio: 'ignore',
      timeout: 10_000,
    });
    const [exitCode] = (await once(child, 'exit')) as [number | null];
    return { exitCode, path: requested };
  } finally {
    server.close();
  }
}

const migrating = PLATFORM_SERVICES.filter((service) => service.migrations);

/** The variables of the class a service's main.ts or migrate.ts loads. */
function configOf(service: string, program: 'main' | 'migrate') {
  return programConfigVariables(ROOT, service, program);
}

it('reads each service configuration class from its sources', () => {
  // A guard for the reader itself: these are known to be required.
  expect(configOf('gateway', 'main').required).toEqual(
    expect.arrayContaining(['DATABASE_URL', 'NATS_URL', 'CURSOR_SECRET', 'TLS_CERT_FILE']),
  );
  expect(configOf('gateway', 'main').required).not.toContain('HTTPS_PORT');
  expect(configOf('accounts', 'migrate').required).toEqual(['DATABASE_URL']);
});

describe('docker/compose.yaml', () => {
  const compose = mapping(readYaml('docker/compose.yaml'), 'compose.yaml');
  const services = mapping(compose['services'], 'services');
  const service = (name: string): Mapping => mapping(services[name], `services.${name}`);

  function environment(name: string): Record<string, unknown> {
    const value = service(name)['environment'];
    if (Array.isArray(value)) {
      return Object.fromEntries(
        strings(value, `${name}.environment`).map((entry) => {
          const [key = '', ...rest] = entry.split('=');
          return [key, rest.length ? rest.join('=') : undefined];
        }),
      );
    }
    return value === undefined ? {} : mapping(value, `${name}.environment`);
  }

  /**
   * A value that is never empty: literal text, `${VAR:?message}` (Compose refuses to start
   * without VAR) or `${VAR:-default}` with a default.
   */
  function isProvided(value: unknown): boolean {
    if (typeof value === 'number' || typeof value === 'boolean') return true;
    if (typeof value !== 'string' || value === '') return false;
    const interpolations = /\$\{(\w+)(?:(:?[-?])([^}]*))?\}/g;
    if (value.replace(interpolations, '') !== '') return true;
    return [...value.matchAll(interpolations)].every(
      ([, , operator, argument]) => operator === ':?' || (operator === ':-' && argument !== ''),
    );
  }

  function dependsOn(name: string): Mapping {
    const value = service(name)['depends_on'];
    if (Array.isArray(value)) {
      return Object.fromEntries(strings(value, name).map((dependency) => [dependency, {}]));
    }
    return value === undefined ? {} : mapping(value, `${name}.depends_on`);
  }

  function seconds(duration: unknown): number {
    if (duration === undefined) return 10; // Compose's default stop_grace_period
    if (typeof duration === 'number') return duration;
    if (typeof duration !== 'string')
      throw new Error(`not a duration: ${JSON.stringify(duration)}`);
    const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6 };
    let total = 0;
    for (const [, amount, unit = ''] of duration.matchAll(/([\d.]+)(h|ms|m|s|us)/g)) {
      total += Number(amount) * (units[unit] ?? NaN);
    }
    return total;
  }

  /** The program a container runs: { app: 'accounts', kind: 'main' } for dist/apps/accounts/src/main.js. */
  function program(name: string): { app: string; kind: string } | null {
    const command: unknown = service(name)['command'];
    const first: unknown = Array.isArray(command) ? (command as unknown[])[0] : command;
    if (typeof first !== 'string') return null;
    const [, app, kind] = /^dist\/apps\/([^/]+)\/src\/(\w+)\.js$/.exec(first) ?? [];
    return app && kind ? { app, kind } : null;
  }

  it.each(PLATFORM_SERVICES.map((s) => s.name))('runs the %s service', (name) => {
    expect(Object.keys(services)).toContain(name);
    expect(service(name)['command']).toEqual([`dist/apps/${name}/src/main.js`]);
    expect(existsSync(path.join(ROOT, `apps/${name}/src/main.ts`))).toBe(true);
  });

  it('runs no program of a service that is not on the platform', () => {
    const platform = PLATFORM_SERVICES.map((s) => s.name);
    const programs = Object.keys(services).flatMap((name) => program(name)?.app ?? []);
    expect(programs.filter((app) => !platform.includes(app))).toEqual([]);
    const migrateJobs = Object.keys(services).filter((name) => program(name)?.kind === 'migrate');
    expect(migrateJobs.sort()).toEqual(migrating.map((s) => `migrate-${s.name}`).sort());
  });

  it.each(migrating.map((s) => s.name))(
    'runs the %s migrations to completion before the service starts',
    (name) => {
      const job = `migrate-${name}`;
      expect(Object.keys(services)).toContain(job);
      expect(service(job)['command']).toEqual([`dist/apps/${name}/src/migrate.js`]);
      expect(service(job)['restart']).toBe('no');
      expect(existsSync(path.join(ROOT, `apps/${name}/src/migrate.ts`))).toBe(true);
      expect(dependsOn(name)[job]).toEqual({ condition: 'service_completed_successfully' });
    },
  );

  it.each(PLATFORM_SERVICES.map((s) => s.name))(
    'gives %s every variable its configuration requires, and only variables it reads',
    (name) => {
      const config = configOf(name, 'main');
      const env = environment(name);
      expect(config.required.filter((variable) => !isProvided(env[variable]))).toEqual([]);
      expect(Object.keys(env).filter((variable) => !config.all.includes(variable))).toEqual([]);
      const dependencies = dependsOn(name);
      if ('DATABASE_URL' in env) {
        expect(dependencies['postgres']).toEqual({ condition: 'service_healthy' });
      }
      if ('NATS_URL' in env) expect(dependencies['nats']).toEqual({ condition: 'service_healthy' });
    },
  );

  it.each(migrating.map((s) => s.name))(
    'gives the %s migrations every variable they require',
    (name) => {
      const config = configOf(name, 'migrate');
      const env = environment(`migrate-${name}`);
      expect(config.required.filter((variable) => !isProvided(env[variable]))).toEqual([]);
      const known = [...config.all, ...LOGGER_VARIABLES];
      expect(Object.keys(env).filter((variable) => !known.includes(variable))).toEqual([]);
      expect(dependsOn(`migrate-${name}`)['postgres']).toEqual({ condition: 'service_healthy' });
    },
  );

  it.each(PLATFORM_SERVICES.map((s) => s.name))(
    'checks %s with GET /readyz on its health port, and its dependents wait until it is healthy',
    async (name) => {
      expect(configOf(name, 'main').all).toContain('HEALTH_PORT');
      const healthPort = Number(environment(name)['HEALTH_PORT']);
      expect(Number.isInteger(healthPort) && healthPort > 0).toBe(true);
      const check = mapping(service(name)['healthcheck'], `${name}.healthcheck`);
      const [form, ...command] = strings(check['test'], `${name}.healthcheck.test`);
      expect(form).toBe('CMD');
      expect(command.slice(0, 2)).toEqual(['node', '-e']);
      // No curl in the image: run the check's own script, as the container would, against a
      // loopback stand-in for the service's health server.
      expect(await runHealthcheck(command.slice(1), 200)).toEqual({ exitCode: 0, path: '/readyz' });
      expect(await runHealthcheck(command.slice(1), 503)).toEqual({ exitCode: 1, path: '/readyz' });
      for (const dependent of Object.keys(services)) {
        const dependency = dependsOn(dependent)[name];
        if (dependency !== undefined) expect(dependency).toEqual({ condition: 'service_healthy' });
      }
    },
  );

  it.each(PLATFORM_SERVICES.map((s) => s.name))(
    'lets %s finish its in-flight work before it is killed',
    (name) => {
      const graceMs = Number(environment(name)['SHUTDOWN_GRACE_MS'] ?? 0);
      expect(seconds(service(name)['stop_grace_period']) * 1000).toBeGreaterThan(graceMs);
    },
  );
});
