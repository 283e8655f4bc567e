import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

import { PLATFORM_SERVICES } from '@envoi/shared-infra';
import { IsolatedPlatform } from '@envoi/shared-testing';

const run = promisify(execFile);

const WORKSPACE = path.resolve(__dirname, '../..');

/** Every service that owns a PostgreSQL schema (its migrations and its entities). */
const SCHEMA_OWNERS = PLATFORM_SERVICES.filter((service) => service.migrations).map(
  (service) => service.name,
);

const STEP_TIMEOUT_MS = 120_000;

/**
 * Each service's migrations, run on an empty database, give exactly the schema its entities
 * describe: TypeORM's `migration:generate --check` finds nothing to change. A migration that
 * forgets what an entity declares (or the reverse) fails here rather than in production.
 */
describe('schema drift', () => {
  let platform: IsolatedPlatform;

  beforeAll(async () => {
    await IsolatedPlatform.build();
    platform = await IsolatedPlatform.start({ owner: 'schema_drift' });
  }, STEP_TIMEOUT_MS);

  afterAll(async () => {
    await platform?.stop();
  });

  it.each(SCHEMA_OWNERS)(
    '%s: its migrations match its entities',
    async (service) => {
      const env = { ...process.env, DATABASE_URL: platform.databaseUrl };
      const node = (args: string[]) =>
        run(process.execPath, args, { cwd: WORKSPACE, env, timeout: STEP_TIMEOUT_MS });
      await node([`dist/apps/${service}/src/migrate.js`]);
      try {
        await node([
          'node_modules/typeorm/cli.js',
          'migration:generate',
          '--check',
          '-d',
          `dist/apps/${service}/src/database/data-source.js`,
          `apps/${service}/src/database/migrations/Check`,
        ]);
      } catch (error) {
        const { stdout = '' } = error as { stdout?: string };
        throw new Error(
          `${service}: the entities need changes its migrations do not make:\n${stdout}`,
        );
      }
    },
    STEP_TIMEOUT_MS,
  );
});
