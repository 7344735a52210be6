import { defineConfig } from 'vitest/config';

// The tests Stryker runs against its mutants (npm run mutate): the unit tests of the run's safety
// code and the plan's ordering, without the lab-backed suites (faults, kill-resume, rehearse), whose
// minutes per run would make a mutation run take days on two cores.
export default defineConfig({
  test: {
    include: [
      'src/run/gates.test.ts',
      'src/run/handlers/handlers.test.ts',
      'src/run/unobserved.test.ts',
      'src/run/orchestrator.test.ts',
      'src/plan/order.test.ts',
      'src/plan/build.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    setupFiles: ['test/support/setup.ts'],
  },
});
