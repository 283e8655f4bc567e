import { execFileSync } from 'node:child_process';
import path from 'node:path';

import {
  formatFiles,
  generateFiles,
  type GeneratorCallback,
  names,
  type Tree,
  updateJson,
} from '@nx/devkit';

import {
  addErrorStatuses,
  addLintScope,
  addToChartValues,
  addToCompose,
  addToPlatformServices,
  type ServiceNames,
  withContractsPath,
} from './wiring';

export interface ServiceGeneratorOptions {
  name: string;
  /** Leave the files as written, without `eslint --fix` (import order) afterwards. */
  skipLint?: boolean;
}

const NAME_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** The generated error codes and their HTTP statuses in the gateway. */
const ERROR_STATUSES = [{ member: 'NotFound', status: 404 }] as const;

function updateText(tree: Tree, file: string, edit: (text: string) => string): void {
  const text = tree.read(file, 'utf-8');
  if (text === null) throw new Error(`${file} is missing`);
  tree.write(file, edit(text));
}

/**
 * `nx g @envoi/generators:service <name>`: a NATS service (apps/<name>) and its contracts
 * (libs/contracts/<name>), wired into every list of services (docs/adding-a-service.md).
 */
export async function serviceGenerator(
  tree: Tree,
  options: ServiceGeneratorOptions,
): Promise<GeneratorCallback> {
  const { name } = options;
  if (!NAME_PATTERN.test(name)) throw new Error(`${name}: expected a kebab-case name`);
  if (tree.exists(`apps/${name}`) || tree.exists(`libs/contracts/${name}`)) {
    throw new Error(`apps/${name} or libs/contracts/${name} already exists`);
  }
  const { className, propertyName, constantName } = names(name);
  const service: ServiceNames = { name, className };

  generateFiles(tree, path.join(__dirname, 'files'), '.', {
    name,
    className,
    propertyName,
    constantName,
    schema: name.replace(/-/g, '_'),
    timestamp: Date.now(),
    template: '',
  });

  updateText(tree, 'libs/shared/infra/src/services.ts', (text) =>
    addToPlatformServices(text, service),
  );
  updateText(tree, 'eslint.config.mjs', (text) => addLintScope(text, service));
  updateText(tree, 'apps/gateway/src/errors/error-status.ts', (text) =>
    addErrorStatuses(text, service, ERROR_STATUSES),
  );
  updateText(tree, 'docker/compose.yaml', (text) => addToCompose(text, service));
  updateText(tree, 'k8s/envoi/values.yaml', (text) => addToChartValues(text, service));
  updateJson(
    tree,
    'tsconfig.base.json',
    (json: { compilerOptions: { paths: Record<string, string[]> } }) => {
      json.compilerOptions.paths = withContractsPath(json.compilerOptions.paths, service);
      return json;
    },
  );
  updateJson(tree, 'apps/e2e/project.json', (json: { implicitDependencies: string[] }) => {
    json.implicitDependencies = [...json.implicitDependencies, name];
    return json;
  });

  await formatFiles(tree);
  return () => {
    if (options.skipLint) return;
    const node = (script: string, args: string[], output: 'inherit' | 'ignore' = 'inherit') =>
      execFileSync(process.execPath, [path.join(tree.root, script), ...args], {
        cwd: tree.root,
        stdio: ['ignore', output, 'inherit'],
        env: { ...process.env, NX_DAEMON: 'false' },
      });
    // The module-boundary rule reads the projects from the cached graph: the new ones too.
    node('node_modules/nx/dist/bin/nx.js', ['show', 'projects'], 'ignore');
    // Import order depends on the name; eslint puts it right.
    node('node_modules/eslint/bin/eslint.js', [
      '--fix',
      `apps/${name}`,
      `libs/contracts/${name}`,
      'apps/gateway/src/errors/error-status.ts',
    ]);
  };
}

export default serviceGenerator;
