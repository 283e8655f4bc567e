import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { parseAllDocuments } from 'yaml';

import { helmBinary } from './helm-binary';

const run = promisify(execFile);
const HELM_TIMEOUT_MS = 60_000;

/** A Kubernetes object as `helm template` renders it. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** Values for the chart: files (`-f`), single values (`--set`), files' contents (`--set-file`). */
export interface ChartValues {
  files?: string[];
  /** Strings stay strings (`--set-string`); numbers and booleans are typed (`--set`). */
  set?: Record<string, string | number | boolean>;
  setFile?: Record<string, string>;
}

/** Runs the real helm; a failure's error message carries helm's output. */
export async function helm(args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run(helmBinary(), args, {
      cwd,
      timeout: HELM_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
      // No kube context nor repository settings of the machine.
      env: { PATH: process.env['PATH'] ?? '', HOME: cwd, KUBECONFIG: '/dev/null' },
    });
    return stdout;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`helm ${args.join(' ')} failed:\n${stdout}${stderr}`);
  }
}

export function valuesArgs({ files = [], set = {}, setFile = {} }: ChartValues): string[] {
  return [
    ...files.flatMap((file) => ['-f', file]),
    ...Object.entries(set).flatMap(([key, value]) => [
      typeof value === 'string' ? '--set-string' : '--set',
      // A comma separates values in --set.
      `${key}=${String(value).replaceAll(',', '\\,')}`,
    ]),
    ...Object.entries(setFile).flatMap(([key, file]) => ['--set-file', `${key}=${file}`]),
  ];
}

/** `helm template envoi <chart> -n envoi …`, parsed: every object, hooks included. */
export async function renderChart(
  cwd: string,
  chart: string,
  values: ChartValues,
): Promise<Manifest[]> {
  const output = await helm(
    ['template', 'envoi', chart, '-n', 'envoi', ...valuesArgs(values)],
    cwd,
  );
  return parseAllDocuments(output).flatMap((document) => {
    if (document.errors.length > 0) throw document.errors[0];
    const manifest = document.toJS() as Manifest | null;
    return manifest ? [manifest] : [];
  });
}
