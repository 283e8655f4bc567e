import { readFileSync } from 'node:fs';
import path from 'node:path';

import {
  addErrorStatuses,
  addLintScope,
  addToChartValues,
  addToCompose,
  addToPlatformServices,
  withContractsPath,
} from './wiring';

const ROOT = path.resolve(__dirname, '../../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const NOTES = { name: 'notes', className: 'Notes' };

describe('the wiring of a new service', () => {
  it('starts it with the platform, before the gateway', () => {
    const text = addToPlatformServices(read('libs/shared/infra/src/services.ts'), NOTES);
    expect(text).toContain(
      "  { name: 'notes', migrations: true },\n  { name: 'gateway', migrations: true },",
    );
    expect(() => addToPlatformServices(text, NOTES)).toThrow('already lists notes');
  });

  it('gives it a lint scope once', () => {
    const text = addLintScope(read('eslint.config.mjs'), NOTES);
    expect(text).toContain("const ALL_SCOPES = [\n  'notes',\n");
    expect(addLintScope(text, NOTES)).toBe(text);
  });

  it('maps its error codes to statuses in the gateway, its import in order', () => {
    const text = addErrorStatuses(read('apps/gateway/src/errors/error-status.ts'), NOTES, [
      { member: 'NotFound', status: 404 },
    ]);
    expect(text).toContain(
      "import { NotesErrorCode } from '@envoi/contracts-notes';\nimport { RoutesErrorCode }",
    );
    expect(text).toContain('  | NotesErrorCode;\n\nconst STATUS_BY_CODE');
    expect(text).toContain('  [NotesErrorCode.NotFound]: 404,\n};');
  });

  it('runs it and its migrations in compose, checked on /readyz', () => {
    const text = addToCompose(read('docker/compose.yaml'), NOTES);
    expect(text).toMatch(/\n {2}migrate-notes:\n {4}<<: \*migrate\n[\s\S]*\n {2}accounts:\n/);
    expect(text).toMatch(/\n {2}notes:\n[\s\S]*healthcheck: \*readyz\n[\s\S]*\n {2}gateway:\n/);
  });

  it('gives it an entry in the chart values, before the gateway', () => {
    const text = addToChartValues(read('k8s/envoi/values.yaml'), NOTES);
    expect(text).toMatch(/\n {2}notes:\n {4}migrations: true\n[\s\S]*\n {2}gateway:\n/);
  });

  it('adds the contracts path after the other contracts', () => {
    const paths = withContractsPath(
      { '@envoi/contracts-core': ['a'], '@envoi/shared-config': ['b'] },
      NOTES,
    );
    expect(Object.keys(paths)).toEqual([
      '@envoi/contracts-core',
      '@envoi/contracts-notes',
      '@envoi/shared-config',
    ]);
  });

  it('fails when a landmark has gone', () => {
    expect(() => addToChartValues('services: {}\n', NOTES)).toThrow(
      'k8s/envoi/values.yaml: cannot find',
    );
  });
});
