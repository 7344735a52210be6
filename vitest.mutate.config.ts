import { defineConfig } from 'vitest/config';

// The tests Stryker runs against its mutants (npm run mutate): the unit tests of the run's safety
// code, its step handlers and the plan (its order, its steps, the runbook rendered from them),
// without the lab-backed suites (faults, kill-resume, rehearse, the crash sweep), whose minutes per
// run would make a mutation run take days on two cores.
export default defineConfig({
  test: {
    include: [
      'src/run/gates*.test.ts',
      'src/run/handlers/handlers.test.ts',
      'src/run/unobserved.real.test.ts',
      'src/run/orchestrator.test.ts',
      'src/plan/*.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    setupFiles: ['test/support/setup.ts'],
  },
});
