// Integration tier: one service at a time against real PostgreSQL and real NATS (JetStream),
// provisioned once by the global setup.
module.exports = {
  ...require('./jest.preset.cjs'),
  displayName: 'integration',
  testMatch: ['<rootDir>/{apps,libs,tools}/**/*.int-spec.ts'],
  globalSetup: '<rootDir>/libs/shared/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/libs/shared/testing/src/global-teardown.ts',
  // A hang detector, not a speed check: a suite bounds its own waits; a loaded CI machine may
  // take twice as long as an idle one.
  testTimeout: 60000,
  // One suite at a time: each starts PostgreSQL clients, NATS consumers and service processes of
  // its own, and two side by side on a 2-core CI machine starve each other's timers.
  maxWorkers: 1,
};
