// Integration tier: one service at a time against real PostgreSQL and real NATS (JetStream),
// provisioned once by the global setup.
module.exports = {
  ...require('./jest.preset.cjs'),
  displayName: 'integration',
  testMatch: ['<rootDir>/{apps,libs,tools}/**/*.int-spec.ts'],
  globalSetup: '<rootDir>/libs/shared/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/libs/shared/testing/src/global-teardown.ts',
  testTimeout: 30000,
  maxWorkers: 2,
};
