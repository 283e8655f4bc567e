// Unit tier: fast, no processes. Fakes allowed.
module.exports = {
  ...require('./jest.preset.cjs'),
  displayName: 'unit',
  testMatch: ['<rootDir>/{apps,libs,tools}/**/*.spec.ts'],
};
