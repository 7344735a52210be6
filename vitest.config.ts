import { defineConfig } from 'vitest/config';
import { measureSlowness } from './test/support/slowness.js';

// Hang guards scale with the machine's speed at the start of the run (test/support/slowness.ts);
// the workers inherit the factor.
const slowness = measureSlowness();
process.env.FERRY_TEST_SLOWNESS = String(slowness);
if (slowness > 1)
  console.log(`ferry tests: this machine runs ${slowness}× slow; hang guards scaled to match`);

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000 * slowness,
    hookTimeout: 120_000 * slowness,
    pool: 'forks',
    setupFiles: ['test/support/setup.ts'],
  },
});
