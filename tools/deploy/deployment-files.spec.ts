import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { PLATFORM_SERVICES } from '@envoi/shared-infra';
import Ajv from 'ajv';
import { parse } from 'yaml';

import { type ConfigVariables, configVariablesOf } from './config-variables';

/**
 * The deployment files (docker/compose.yaml and the Helm chart k8s/envoi) cannot run on the build
 * machines (no Docker engine, no cluster), so they are checked against the platform here: every
 * service of PLATFORM_SERVICES runs, every schema owner's migrations run first, and every variable
 * a service's configuration class requires is provided. The required variables are read from the
 * config classes themselves (the one each main.ts / migrate.ts passes to loadConfig), so a new
 * required setting fails this test until both files provide it.
 */

const ROOT = path.resolve(__dirname, '../..');
const CHART = path.join(ROOT, 'k8s/envoi');

/** Read by the logger of every process (createLogger), not by a config class. */
const LOGGER_VARIABLES = ['LOG_LEVEL'];
/** Where the chart mounts the TLS Secret (templates/deployment.yaml). */
const TLS_MOUNT = '/etc/envoi/tls/';

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

/** Helm's way of combining values files: mappings merge, anything else replaces, null deletes. */
function coalesce(base: Mapping, override: Mapping): Mapping {
  const result: Mapping = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete result[key];
    else if (isMapping(value) && isMapping(result[key])) {
      result[key] = coalesce(result[key], value);
    } else result[key] = value;
  }
  return result;
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

const configs = new Map<string, ConfigVariables>();
/** The variables of the class a service's main.ts or migrate.ts loads (read once, on demand). */
function configOf(service: string, program: 'main' | 'migrate'): ConfigVariables {
  const file = `apps/${service}/src/${program}.ts`;
  let config = configs.get(file);
  if (!config) {
    config = configVariablesOf(ROOT, file);
    configs.set(file, config);
  }
  return config;
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

describe('the Helm chart (k8s/envoi)', () => {
  const values = mapping(readYaml('k8s/envoi/values.yaml'), 'values.yaml');
  const services = mapping(values['services'], 'services');
  const sharedConfig = mapping(values['config'] ?? {}, 'config');
  const secretEnv = mapping(mapping(values['secrets'], 'secrets')['env'], 'secrets.env');
  const migrations = mapping(values['migrations'], 'migrations');
  const template = (file: string) => readFileSync(path.join(CHART, 'templates', file), 'utf8');

  function entry(name: string) {
    const svc = mapping(services[name], `services.${name}`);
    const config = { ...sharedConfig, ...mapping(svc['config'] ?? {}, `${name}.config`) };
    return {
      svc,
      config,
      secretEnv: strings(svc['secretEnv'], `${name}.secretEnv`),
      requiredConfig: strings(svc['requiredConfig'], `${name}.requiredConfig`),
      egress: strings(svc['egress'], `${name}.egress`),
      ports: (Array.isArray(svc['ports']) ? svc['ports'] : []).map((port) =>
        mapping(port, `${name}.ports`),
      ),
    };
  }

  it('has values that satisfy values.schema.json, alone and with the example values', () => {
    const schema = JSON.parse(
      readFileSync(path.join(CHART, 'values.schema.json'), 'utf8'),
    ) as object;
    const validate = new Ajv({ allErrors: true }).compile(schema);
    const example = mapping(
      readYaml('k8s/envoi/ci/existing-secrets-values.yaml'),
      'existing-secrets-values.yaml',
    );
    for (const candidate of [values, coalesce(values, example)]) {
      validate(candidate);
      expect(validate.errors ?? []).toEqual([]);
    }
  });

  it('has one entry per platform service, and no other', () => {
    expect(Object.keys(services).sort()).toEqual(PLATFORM_SERVICES.map((s) => s.name).sort());
  });

  it('runs dist/apps/<service>/src/main.js for each entry, and migrate.js in the hook Jobs', () => {
    expect(template('deployment.yaml')).toContain("args: ['dist/apps/{{ $name }}/src/main.js']");
    const jobs = template('migrations.yaml');
    expect(jobs).toContain("args: ['dist/apps/{{ $name }}/src/migrate.js']");
    expect(jobs).toContain('helm.sh/hook: pre-install,pre-upgrade');
    expect(jobs).toContain('helm.sh/hook-weight: {{ $index | toString | quote }}');
    expect(jobs).toContain('helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded');
  });

  it.each(PLATFORM_SERVICES.map((s) => [s.name, s.migrations] as const))(
    'marks %s for a migration hook exactly when it owns a schema (%s)',
    (name, owns) => {
      expect(entry(name).svc['migrations'] === true).toBe(owns);
    },
  );

  it.each(PLATFORM_SERVICES.map((s) => s.name))(
    'gives %s every variable its configuration requires, and only variables it reads',
    (name) => {
      const { config, secretEnv: fromSecret, requiredConfig } = entry(name);
      const variables = configOf(name, 'main');
      // From the Secret (the templates `required` each key, or existingSecret holds it), or a
      // setting with a value, or one the templates refuse to render without (requiredConfig).
      const provided = (variable: string) =>
        fromSecret.includes(variable) ||
        (typeof config[variable] === 'string' && config[variable] !== '') ||
        requiredConfig.includes(variable);
      expect(variables.required.filter((variable) => !provided(variable))).toEqual([]);
      const given = [...Object.keys(config), ...fromSecret];
      expect(given.filter((variable) => !variables.all.includes(variable))).toEqual([]);
      expect(requiredConfig.filter((variable) => !(variable in config))).toEqual([]);
    },
  );

  it.each(PLATFORM_SERVICES.map((s) => s.name))(
    'keeps secrets out of the ConfigMap of %s, and documents each secret it uses',
    (name) => {
      const { config, secretEnv: fromSecret } = entry(name);
      expect(Object.keys(config).filter((variable) => variable in secretEnv)).toEqual([]);
      expect(fromSecret.filter((variable) => !(variable in secretEnv))).toEqual([]);
    },
  );

  it.each(migrating.map((s) => s.name))('gives the %s migrations what they require', (name) => {
    const fromSecret = strings(migrations['secretEnv'], 'migrations.secretEnv');
    const provided = (variable: string) =>
      fromSecret.includes(variable) ||
      (typeof sharedConfig[variable] === 'string' && sharedConfig[variable] !== '');
    expect(configOf(name, 'migrate').required.filter((v) => !provided(v))).toEqual([]);
    expect(fromSecret.filter((variable) => !(variable in secretEnv))).toEqual([]);
  });

  it.each(PLATFORM_SERVICES.map((s) => s.name))(
    'lets %s reach what its configuration points at (NetworkPolicy egress)',
    (name) => {
      const { secretEnv: fromSecret, egress } = entry(name);
      expect(egress.includes('postgres')).toBe(fromSecret.includes('DATABASE_URL'));
      expect(egress.includes('nats')).toBe(fromSecret.includes('NATS_URL'));
      expect(egress.includes('dnsResolvers')).toBe(
        configOf(name, 'main').all.includes('DNS_SERVERS'),
      );
    },
  );

  it.each(PLATFORM_SERVICES.map((s) => s.name))(
    'probes %s on its health port: /healthz for liveness, /readyz for readiness',
    (name) => {
      const { config, ports } = entry(name);
      expect(configOf(name, 'main').all).toEqual(
        expect.arrayContaining(['HEALTH_HOST', 'HEALTH_PORT']),
      );
      expect(config['HEALTH_HOST']).toBe('0.0.0.0');
      const healthPort = Number(config['HEALTH_PORT']);
      expect(Number.isInteger(healthPort) && healthPort > 0).toBe(true);
      expect(ports.map((port) => port['port'])).not.toContain(healthPort);
      expect(ports.map((port) => port['name'])).not.toContain('health');
      const deployment = template('deployment.yaml');
      expect(deployment).toContain(
        '- name: health\n              containerPort: {{ $config.HEALTH_PORT | int }}',
      );
      for (const [probe, path] of [
        ['readinessProbe', '/readyz'],
        ['livenessProbe', '/healthz'],
      ] as const) {
        expect(deployment).toContain(
          `${probe}:\n            httpGet:\n              path: ${path}\n              port: health`,
        );
      }
    },
  );

  it.each(PLATFORM_SERVICES.map((s) => s.name))(
    'exposes the port %s listens on and mounts the certificate it reads',
    (name) => {
      const { config, ports, svc } = entry(name);
      if ('HTTPS_PORT' in config) {
        expect(ports.map((port) => port['port'])).toContain(Number(config['HTTPS_PORT']));
      }
      for (const variable of ['TLS_CERT_FILE', 'TLS_KEY_FILE']) {
        if (!(variable in config)) continue;
        expect(svc['tls']).toBe(true);
        expect(String(config[variable])).toMatch(new RegExp(`^${TLS_MOUNT}tls\\.(crt|key)$`));
      }
      expect(template('deployment.yaml')).toContain(`mountPath: ${TLS_MOUNT.replace(/\/$/, '')}`);
    },
  );

  it.each(PLATFORM_SERVICES.map((s) => s.name))(
    'lets %s finish its in-flight work before it is killed',
    (name) => {
      const { config, svc } = entry(name);
      const graceMs = Number(svc['terminationGracePeriodSeconds'] ?? 30) * 1000;
      const busyMs =
        Number(config['SHUTDOWN_GRACE_MS'] ?? 0) + Number(svc['preStopSleepSeconds'] ?? 0) * 1000;
      expect(graceMs).toBeGreaterThan(busyMs);
    },
  );
});
