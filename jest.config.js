// Tests run as native ESM (node --experimental-vm-modules); swc strips types without type-checking
// (`npm run typecheck` does that separately, which keeps the suite fast).
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
      module: { type: 'es6' },
    }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Fails a test file that leaves unhandled rejections or uncaught exceptions behind.
  setupFilesAfterEnv: ['<rootDir>/test/support/process-guards.ts'],
  testTimeout: 60000,
};
