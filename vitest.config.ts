import { defineConfig } from 'vitest/config';
import { measureSlowness } from './src/util/testing-slowness.js';

// Hang guards scale with the machine's speed at the start of the run (src/util/testing-slowness.ts);
// the workers inherit the factor.
const slowness = measureSlowness();
process.env.FERRY_TEST_SLOWNESS = String(slowness);
if (slowness > 1)
  console.log(`ferry tests: this machine runs ${slowness}× slow; hang guards scaled to match`);

/**
 * Files that start real servers (etcd members, a lab, kubectl, headless chromium) and judge what
 * they see by time: probe deadlines, elections, write gaps. They are named `*.real.test.ts` and run
 * one at a time, after the other files, so that two labs never compete for the machine's two cores:
 * on CI a rehearsal run beside the fault suite saw one write-then-read take over its 2 s deadline,
 * which it rightly counts as an API error.
 */
const REAL_SERVERS = ['src/**/*.real.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000 * slowness,
    hookTimeout: 120_000 * slowness,
    pool: 'forks',
    setupFiles: ['test/support/setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: REAL_SERVERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'real-servers',
          include: REAL_SERVERS,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
