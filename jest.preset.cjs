// Shared jest settings: SWC transform (decorator metadata on) with tsconfig path aliases rewritten,
// which global setup files need (moduleNameMapper does not apply to them).
const path = require('node:path');
const { swcOptions, workspaceRoot } = require('./tools/build/swc-options.cjs');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = Object.fromEntries(
  Object.entries(compilerOptions.paths).map(([alias, [target]]) => [
    `^${alias.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
    path.join(workspaceRoot, target),
  ]),
);

module.exports = {
  rootDir: workspaceRoot,
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { ...swcOptions({ rewritePaths: true }), swcrc: false }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.data/'],
  setupFiles: ['reflect-metadata'],
};
