// Compiles every TypeScript source of apps/, libs/ and tools/ into dist/ with SWC, keeping the
// directory layout and rewriting path aliases (tsconfig.base.json "paths") to relative imports.
// Files are overwritten in place (a running `npm start` keeps working while the admin command
// builds). Type checking is separate: `npm run typecheck`.
import { transformFile } from '@swc/core';
import { createRequire } from 'node:module';
import { mkdir, readdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { swcOptions, workspaceRoot } = require('./swc-options.cjs');

const SOURCE_ROOTS = ['apps', 'libs', 'tools'];
const OUT_DIR = path.join(workspaceRoot, 'dist');
const SKIPPED = /(\.spec|\.int-spec|\.e2e-spec|\.d)\.ts$/;
const quiet = process.argv.includes('--quiet');

async function* typescriptFiles(dir) {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules' || entry.name === 'test') continue;
      yield* typescriptFiles(full);
    } else if (entry.name.endsWith('.ts') && !SKIPPED.test(entry.name)) {
      yield full;
    }
  }
}

async function compile(file, options) {
  const relative = path.relative(workspaceRoot, file);
  const outFile = path.join(OUT_DIR, relative.replace(/\.ts$/, '.js'));
  const output = await transformFile(file, {
    ...options,
    filename: file,
    sourceFileName: path.relative(path.dirname(outFile), file),
  });
  await mkdir(path.dirname(outFile), { recursive: true });
  const mapName = `${path.basename(outFile)}.map`;
  if (output.map) await writeAtomically(`${outFile}.map`, output.map);
  await writeAtomically(outFile, `${output.code}\n//# sourceMappingURL=${mapName}\n`);
}

// Test suites compile while services of other suites load files from dist/: a file is replaced
// whole (rename), never seen truncated or half written.
async function writeAtomically(file, content) {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, content);
  await rename(temporary, file);
}

const started = Date.now();
const options = swcOptions({ rewritePaths: true });
const jobs = [];
for (const root of SOURCE_ROOTS) {
  const dir = path.join(workspaceRoot, root);
  if (!(await stat(dir).catch(() => null))) continue;
  for await (const file of typescriptFiles(dir)) jobs.push(compile(file, options));
}
await Promise.all(jobs);
if (!quiet) console.log(`compiled ${jobs.length} files into dist/ in ${Date.now() - started} ms`);
