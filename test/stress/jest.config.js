// The long robustness runs (`npm run test:stress`): the normal test configuration, pointed at
// test/stress/*.stress.ts, which `npm test` never matches.
import base from '../../jest.config.js';

export default {
  ...base,
  rootDir: '../..',
  testMatch: ['<rootDir>/test/stress/**/*.stress.ts'],
  testTimeout: 15 * 60_000,
};
