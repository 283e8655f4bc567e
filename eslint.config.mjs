import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

const ALL_SCOPES = [
  'gateway',
  'accounts',
  'domains',
  'messages',
  'suppressions',
  'delivery',
  'webhooks',
  'routes',
  'smtp',
];

const ALIAS_ONLY = {
  group: ['@envoi/*/src/*', '../../libs/*'],
  message: 'Import libs by alias only.',
};
const NO_TEST_HELPERS = {
  name: '@envoi/shared-testing',
  message: 'Test helpers are for tests only.',
};

export default tseslint.config(
  { ignores: ['**/dist', '**/node_modules', '**/.data', '**/coverage', '**/.nx'] },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: true,
          allow: [],
          banTransitiveDependencies: true,
          depConstraints: [
            {
              sourceTag: 'type:app',
              onlyDependOnLibsWithTags: [
                'type:contracts',
                'type:util',
                'type:client',
                'type:testing',
              ],
            },
            // A service's typed client (libs/clients/<service>) carries that service's scope and is
            // how other apps call it: cached lookups over its contracts, on the shared bus
            // library. Clients never use each other, and utils and contracts never use clients.
            { sourceTag: 'type:client', onlyDependOnLibsWithTags: ['type:util', 'type:contracts'] },
            {
              sourceTag: 'type:contracts',
              onlyDependOnLibsWithTags: ['type:contracts'],
              bannedExternalImports: ['@nestjs/*', 'typeorm', 'nats', 'rxjs', 'pg', 'fastify'],
            },
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:contracts'] },
            {
              sourceTag: 'type:tooling',
              // type:testing for the benchmarks only (tools/bench: loopback DNS and SMTP sinks);
              // the no-restricted-imports block below keeps it out of the other tools.
              onlyDependOnLibsWithTags: [
                'type:tooling',
                'type:util',
                'type:contracts',
                'type:testing',
              ],
            },
            {
              sourceTag: 'type:testing',
              onlyDependOnLibsWithTags: ['type:tooling', 'type:util', 'type:contracts'],
            },
            {
              sourceTag: 'type:e2e',
              onlyDependOnLibsWithTags: [
                'type:contracts',
                'type:util',
                'type:testing',
                'type:tooling',
              ],
            },
            ...ALL_SCOPES.map((scope) => ({
              sourceTag: `scope:${scope}`,
              onlyDependOnLibsWithTags: [
                `scope:${scope}`,
                'scope:shared',
                'type:contracts',
                'type:client',
              ],
            })),
          ],
        },
      ],
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        {
          prefer: 'type-imports',
          fixStyle: 'separate-type-imports',
          disallowTypeAnnotations: false,
        },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      // Annotations on decorated properties emit the design:type metadata that validation and
      // conversion read; an "inferrable" annotation is not redundant here.
      '@typescript-eslint/no-inferrable-types': 'off',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@envoi/*/src/*', '../../libs/*'], message: 'Import libs by alias only.' },
          ],
        },
      ],
    },
  },
  {
    // Test-only libraries never reach production code.
    files: ['apps/**/*.ts', 'libs/**/*.ts', 'tools/**/*.ts'],
    ignores: [
      'tools/bench/**',
      '**/*.spec.ts',
      '**/*.int-spec.ts',
      '**/*.e2e-spec.ts',
      '**/test/**',
      'libs/shared/testing/**',
      'apps/e2e/**',
    ],
    rules: {
      'no-restricted-imports': ['error', { paths: [NO_TEST_HELPERS], patterns: [ALIAS_ONLY] }],
    },
  },
  {
    // The edge library serves every edge (HTTP, SMTP, dashboard): no web framework in it.
    files: ['libs/shared/edge/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [NO_TEST_HELPERS],
          patterns: [
            ALIAS_ONLY,
            {
              group: ['@nestjs/*', 'fastify', 'fastify/*'],
              message: 'Edge adapters live in apps.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', '**/test/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
