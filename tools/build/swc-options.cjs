// SWC options shared by the build (tools/build/compile.mjs) and jest (@swc/jest).
// Decorator metadata is required by NestJS DI, TypeORM and class-validator.
const path = require('node:path');
const { compilerOptions } = require('../../tsconfig.base.json');

const workspaceRoot = path.resolve(__dirname, '../..');

/** @param {{ rewritePaths: boolean }} options */
function swcOptions({ rewritePaths }) {
  return {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      keepClassNames: true,
      ...(rewritePaths ? { baseUrl: workspaceRoot, paths: compilerOptions.paths } : {}),
    },
    module: { type: 'commonjs', strictMode: true, noInterop: false },
    sourceMaps: true,
  };
}

module.exports = { swcOptions, workspaceRoot };
