import { defineConfig } from 'vitest/config';

// The tests Stryker runs against its mutants (npm run mutate): the unit tests of the run's safety
// code (gates, handlers, orchestrator, resume, drains), the plan (its order, its steps, its worker
// batches, the runbook rendered from them), the Cluster API core and the backup's and restore's
// pure halves. The suites that start a lab
// with etcd, the lab Cluster API or moto (faults, kill-resume, rehearse, the crash sweep, the capi
// hazards, the backup round trip) stay out: minutes per run would make a mutation run take days on
// two cores; CI runs them.
// A run over part of the scope names the tests that reach it (MUTATION_TESTS=glob,glob): a static
// mutant (a module-level constant) runs every included test, and over the whole set that is
// most of an hour for a handful of mutants.
const only = process.env['MUTATION_TESTS']?.split(',').filter(Boolean);

export default defineConfig({
  test: {
    include: only ?? [
      'src/run/gates*.test.ts',
      'src/run/handlers/handlers.test.ts',
      'src/run/unobserved.real.test.ts',
      'src/run/orchestrator*.test.ts',
      'src/run/resume*.test.ts',
      'src/run/observe*.test.ts',
      'src/run/drain-nodes.test.ts',
      'src/run/drain-pacing.test.ts',
      'src/run/measured-timing.test.ts',
      'src/plan/*.test.ts',
      'src/plan/batches/*.test.ts',
      'src/capi/*.test.ts',
      'src/adapters/provisioners/*.test.ts',
      'src/adapters/capi/*.test.ts',
      'src/mgmt/graph.test.ts',
      'src/mgmt/references.test.ts',
      'src/mgmt/restore-into.test.ts',
      'src/mgmt/backup*.test.ts',
      'src/mgmt/restore-plan.test.ts',
    ],
    exclude: [
      '**/node_modules/**',
      'src/capi/*.real.test.ts',
      'src/adapters/**/*.real.test.ts',
      'src/plan/*.real.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    setupFiles: ['test/support/setup.ts'],
  },
});
