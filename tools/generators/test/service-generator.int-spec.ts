import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { renderChart } from '@envoi/deploy';
import { PLATFORM_SERVICES } from '@envoi/shared-infra';
import { IsolatedPlatform } from '@envoi/shared-testing';

const run = promisify(execFile);

const ROOT = path.resolve(__dirname, '../../..');
const SERVICE = 'sample-notes';
const STEP_TIMEOUT_MS = 240_000;

/** The workspace's files as they are now (committed or not, never ignored ones). */
async function workspaceFiles(): Promise<string[]> {
  const { stdout } = await run(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return stdout.split('\0').filter((file) => file !== '');
}

/** Runs a Node program of the copy; its output is in the error when it fails. */
async function runIn(copy: string, program: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  try {
    return await run(process.execPath, [path.join(copy, program), ...args], {
      cwd: copy,
      env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', ...env },
      timeout: STEP_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${program} ${args.join(' ')} failed:\n${stdout}\n${stderr}`);
  }
}

/**
 * The service generator, run as a developer runs it (`nx g`), on a copy of the workspace: the
 * service it makes type-checks, passes its own unit and integration tests (booted from dist/
 * against real PostgreSQL and NATS, answering its ping and /readyz), passes the deployment files'
 * checks of compose.yaml and the chart, and renders in the chart (the real helm). The repository
 * itself is left untouched.
 */
describe('nx g @envoi/generators:service', () => {
  let copy = '';

  beforeAll(async () => {
    copy = mkdtempSync(path.join(os.tmpdir(), 'envoi-generator-int-'));
    for (const file of await workspaceFiles()) {
      mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
      copyFileSync(path.join(ROOT, file), path.join(copy, file));
    }
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
    await runIn(copy, 'node_modules/nx/dist/bin/nx.js', [
      'g',
      '@envoi/generators:service',
      SERVICE,
      '--no-interactive',
    ]);
  }, STEP_TIMEOUT_MS);

  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('lists the new service where every service is listed', () => {
    const read = (file: string) => readFileSync(path.join(copy, file), 'utf8');
    expect(read('libs/shared/infra/src/services.ts')).toContain(
      `{ name: '${SERVICE}', migrations: true }`,
    );
    expect(read('docker/compose.yaml')).toContain(`dist/apps/${SERVICE}/src/migrate.js`);
    expect(read('k8s/envoi/values.yaml')).toContain(`\n  ${SERVICE}:\n    migrations: true\n`);
    expect(read('apps/gateway/src/errors/error-status.ts')).toContain(
      'SampleNotesErrorCode.NotFound',
    );
    expect(read('tsconfig.base.json')).toContain(`"@envoi/contracts-${SERVICE}"`);
    expect(read('eslint.config.mjs')).toContain(`'${SERVICE}',`);
    // The repository's own list is untouched.
    expect(PLATFORM_SERVICES.map((service) => service.name)).not.toContain(SERVICE);
  });

  it(
    'type-checks with the files it edited',
    async () => {
      writeFileSync(
        path.join(copy, 'tsconfig.generated.json'),
        JSON.stringify({
          extends: './tsconfig.json',
          include: [
            `apps/${SERVICE}/**/*.ts`,
            `libs/contracts/${SERVICE}/**/*.ts`,
            'apps/gateway/src/errors/*.ts',
            'libs/shared/infra/src/*.ts',
          ],
        }),
      );
      await runIn(copy, 'node_modules/typescript/bin/tsc', ['-p', 'tsconfig.generated.json']);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "passes its unit tests and the deployment files' checks (compose, the rendered chart)",
    async () => {
      const { stderr } = await runIn(copy, 'node_modules/jest/bin/jest.js', [
        '-c',
        'jest.unit.config.cjs',
        `apps/${SERVICE}`,
        `libs/contracts/${SERVICE}`,
        'tools/deploy',
        '--verbose',
      ]);
      // Every suite passes (jest exits non-zero otherwise), the generated ones among them.
      expect(stderr).toMatch(/Test Suites:\s+(\d+) passed, \1 total/);
      expect(stderr).toContain(`apps/${SERVICE}/src/ping/ping.controller.spec.ts`);
      expect(stderr).toContain(`runs the ${SERVICE} service`);
      expect(stderr).toContain(`probes ${SERVICE} on its health port`);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'renders in the Helm chart: a Deployment probed on its health port and a migration hook Job',
    async () => {
      const manifests = await renderChart(copy, 'k8s/envoi', {
        files: ['k8s/envoi/ci/existing-secrets-values.yaml'],
      });
      const named = (kind: string, name: string) =>
        manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);
      const containerOf = (kind: string, name: string) =>
        (
          named(kind, name)?.['spec'] as
            { template: { spec: { containers: object[] } } } | undefined
        )?.template.spec.containers;
      const deployment = containerOf('Deployment', `envoi-${SERVICE}`);
      expect(deployment).toHaveLength(1);
      expect(deployment?.[0]).toMatchObject({
        args: [`dist/apps/${SERVICE}/src/main.js`],
        livenessProbe: { httpGet: { path: '/healthz', port: 'health' } },
        readinessProbe: { httpGet: { path: '/readyz', port: 'health' } },
      });
      const job = named('Job', `envoi-migrate-${SERVICE}`);
      expect(job?.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      expect(containerOf('Job', `envoi-migrate-${SERVICE}`)?.[0]).toMatchObject({
        args: [`dist/apps/${SERVICE}/src/migrate.js`],
      });
      expect(named('ConfigMap', `envoi-${SERVICE}`)).toBeDefined();
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'boots from dist/ and passes its integration test against real PostgreSQL and NATS',
    async () => {
      // The servers of this run's global setup.
      const { stderr } = await runIn(
        copy,
        'node_modules/jest/bin/jest.js',
        ['-c', 'jest.int.config.cjs', `apps/${SERVICE}`, '--verbose'],
        { TEST_DATABASE_URL: process.env['DATABASE_URL'], TEST_NATS_URL: process.env['NATS_URL'] },
      );
      expect(stderr).toMatch(/Tests:\s+3 passed, 3 total/);
      expect(stderr).toContain('is ready: its database and the bus answer');
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'has an initial migration that matches its entities (the kit tables)',
    async () => {
      // A database of its own (and a bus, unused).
      const platform = await IsolatedPlatform.start({ owner: 'generator' });
      try {
        const env = { DATABASE_URL: platform.databaseUrl };
        await runIn(copy, 'tools/build/compile.mjs', ['--quiet']);
        await runIn(copy, `dist/apps/${SERVICE}/src/migrate.js`, [], env);
        // Fails when the entities need a schema change the migrations do not make.
        await runIn(
          copy,
          'node_modules/typeorm/cli.js',
          [
            'migration:generate',
            '--check',
            '-d',
            `dist/apps/${SERVICE}/src/database/data-source.js`,
            `apps/${SERVICE}/src/database/migrations/Check`,
          ],
          env,
        );
      } finally {
        await platform.stop();
      }
    },
    STEP_TIMEOUT_MS,
  );
});
