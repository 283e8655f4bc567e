// End-to-end tier: the whole platform started from dist/ the way `npm start` does, driven over
// real HTTPS. Services are shared by all specs; every spec creates its own accounts.
module.exports = {
  ...require('./jest.preset.cjs'),
  displayName: 'e2e',
  testMatch: ['<rootDir>/apps/e2e/src/**/*.e2e-spec.ts'],
  globalSetup: '<rootDir>/apps/e2e/src/support/global-setup.ts',
  globalTeardown: '<rootDir>/apps/e2e/src/support/global-teardown.ts',
  // A hang detector, not a speed check (specs bound their own waits).
  testTimeout: 120000,
  // One spec at a time: they share the one platform.
  maxWorkers: 1,
};
