/**
 * The edits a new service makes to files that list every service, as text in, text out. Each
 * inserts before a landmark of the file and fails when the landmark is gone, so that a
 * restructured file breaks the generator's tests rather than the generated wiring.
 */

export interface ServiceNames {
  /** kebab-case: the app, contracts lib, subjects' prefix, `scope:` tag. */
  name: string;
  /** PascalCase: `<ClassName>Config`, `<ClassName>ErrorCode`, `<ClassName>Subjects`. */
  className: string;
}

/** Inserts before the landmark, or after it. */
function insertAt(
  text: string,
  landmark: string,
  insertion: string,
  file: string,
  after = false,
): string {
  const found = text.indexOf(landmark);
  if (found < 0) throw new Error(`${file}: cannot find ${JSON.stringify(landmark)}`);
  const at = after ? found + landmark.length : found;
  return text.slice(0, at) + insertion + text.slice(at);
}

function refuseExisting(present: boolean, file: string, name: string): void {
  if (present) throw new Error(`${file} already lists ${name}`);
}

/** libs/shared/infra/src/services.ts: started by `npm start`, before the gateway (the edge). */
export function addToPlatformServices(text: string, { name }: ServiceNames): string {
  const file = 'libs/shared/infra/src/services.ts';
  refuseExisting(text.includes(`{ name: '${name}',`), file, name);
  return insertAt(text, "  { name: 'gateway',", `  { name: '${name}', migrations: true },\n`, file);
}

/** eslint.config.mjs: its `scope:` tag, which may use only itself, shared libs and contracts. */
export function addLintScope(text: string, { name }: ServiceNames): string {
  if (text.includes(`  '${name}',\n`)) return text;
  return insertAt(text, 'const ALL_SCOPES = [\n', `  '${name}',\n`, 'eslint.config.mjs', true);
}

/**
 * apps/gateway/src/errors/error-status.ts: the service's error codes join ServiceErrorCode and
 * the status table (every code a status, checked by the compiler).
 */
export function addErrorStatuses(
  text: string,
  { name, className }: ServiceNames,
  statuses: ReadonlyArray<{ member: string; status: number }>,
): string {
  const file = 'apps/gateway/src/errors/error-status.ts';
  const enumName = `${className}ErrorCode`;
  refuseExisting(text.includes(enumName), file, enumName);
  const importLine = `import { ${enumName} } from '@envoi/contracts-${name}';\n`;
  // Among the contracts imports, in order (the import-sort rule).
  const imports = [...text.matchAll(/^import .* from '(@envoi\/[^']+)';\n/gm)];
  const next = imports.find((match) => (match[1] ?? '') > `@envoi/contracts-${name}`);
  let result = next
    ? insertAt(text, next[0], importLine, file)
    : insertAt(text, '\n/**', importLine, file);
  result = insertAt(result, ';\n\nconst STATUS_BY_CODE', `\n  | ${enumName}`, file);
  const rows = statuses.map(({ member, status }) => `  [${enumName}.${member}]: ${status},\n`);
  return insertAt(result, '};\n\n/** The HTTP status', `\n${rows.join('')}`, file);
}

/** docker/compose.yaml: its migration job beside the others, the service before the gateway. */
export function addToCompose(text: string, { name }: ServiceNames): string {
  const file = 'docker/compose.yaml';
  refuseExisting(text.includes(`\n  ${name}:\n`), file, name);
  const job = [
    `  migrate-${name}:`,
    '    <<: *migrate',
    `    command: ['dist/apps/${name}/src/migrate.js']`,
    '',
    '',
  ].join('\n');
  const service = [
    `  ${name}:`,
    '    <<: *envoi',
    `    command: ['dist/apps/${name}/src/main.js']`,
    '    environment:',
    '      DATABASE_URL: *database-url',
    '      NATS_URL: *nats-url',
    '      HEALTH_PORT: *health-port',
    '      DATABASE_POOL_SIZE: 10',
    '      SHUTDOWN_GRACE_MS: 5000',
    '      LOG_LEVEL: ${LOG_LEVEL:-info}',
    '    depends_on:',
    `      migrate-${name}:`,
    '        condition: service_completed_successfully',
    '      postgres:',
    '        condition: service_healthy',
    '      nats:',
    '        condition: service_healthy',
    '    healthcheck: *readyz',
    '    stop_grace_period: 15s',
    '',
    '',
  ].join('\n');
  const withJob = insertAt(text, '  accounts:\n    <<: *envoi\n', job, file);
  return insertAt(withJob, '  gateway:\n    <<: *envoi\n', service, file);
}

/** k8s/envoi/values.yaml: its entry in `services`, before the gateway's. */
export function addToChartValues(text: string, { name }: ServiceNames): string {
  const file = 'k8s/envoi/values.yaml';
  refuseExisting(text.includes(`\n  ${name}:\n    migrations:`), file, name);
  const entry = [
    `  ${name}:`,
    '    migrations: true',
    '    replicas: 2',
    '    autoscaling:',
    '      enabled: false',
    '      minReplicas: 2',
    '      maxReplicas: 4',
    '      targetCPUUtilizationPercentage: 70',
    '    secretEnv: [DATABASE_URL, NATS_URL]',
    '    egress: [postgres, nats]',
    '    config:',
    "      DATABASE_POOL_SIZE: '10'",
    "      SHUTDOWN_GRACE_MS: '10000'",
    "      OUTBOX_RELAY_INTERVAL_MS: '1000'",
    "      OUTBOX_RELAY_BATCH: '100'",
    '    terminationGracePeriodSeconds: 30',
    '    resources:',
    '      requests:',
    '        cpu: 100m',
    '        memory: 128Mi',
    '      limits:',
    "        cpu: '1'",
    '        memory: 384Mi',
    '',
    '',
  ].join('\n');
  return insertAt(text, '  gateway:\n    migrations: true\n', entry, file);
}

/** tsconfig.base.json paths: the contracts alias, after the other contracts. */
export function withContractsPath(
  paths: Record<string, string[]>,
  { name }: ServiceNames,
): Record<string, string[]> {
  const alias = `@envoi/contracts-${name}`;
  const file = 'tsconfig.base.json';
  refuseExisting(alias in paths, file, alias);
  const entries = Object.entries(paths);
  const lastContracts = entries
    .map(([key]) => key.startsWith('@envoi/contracts-'))
    .lastIndexOf(true);
  entries.splice(lastContracts + 1, 0, [alias, [`libs/contracts/${name}/src/index.ts`]]);
  return Object.fromEntries(entries);
}
