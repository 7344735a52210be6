// @ts-check
/**
 * Mutation testing of the run's safety code (npm run mutate; not in CI: it takes an hour or more).
 * The score and the surviving mutants go to docs/mutation.md (scripts/mutation-report.ts).
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  mutate: [
    'src/run/gates.ts',
    'src/run/handlers/*.ts',
    '!src/run/handlers/*.test.ts',
    'src/plan/order.ts',
    'src/plan/swap.ts',
    'src/plan/load.ts',
    'src/plan/batches/planner.ts',
    'src/plan/batches/capacity.ts',
    'src/plan/batches/fit.ts',
    'src/plan/batches/limits.ts',
    'src/run/orchestrator.ts',
    'src/run/resume.ts',
    'src/run/drain-nodes.ts',
    'src/run/observe.ts',
    'src/capi/providerid-gate.ts',
    'src/capi/adopt-plan.ts',
    'src/adapters/provisioners/capi.ts',
    'src/adapters/capi/cp-create.ts',
    'src/mgmt/backup.ts',
    'src/mgmt/restore-plan.ts',
  ],
  // Messages, titles and the commands of a runbook are text: the render and runbook tests check the
  // text that matters. The score is about guards: conditions, operators, the values they compare.
  mutator: { excludedMutations: ['StringLiteral'] },
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 30_000,
  // The first run (coverage per test over every test file above) takes minutes on two shared cores.
  dryRunTimeoutMinutes: 30,
  reporters: ['clear-text', 'progress', 'json'],
  // A run over part of the scope (npx stryker run --mutate FILES) names its own report with
  // MUTATION_REPORT=…; scripts/mutation-report.ts merges the parts.
  jsonReporter: { fileName: process.env.MUTATION_REPORT ?? '.ferry-cache/mutation/mutation.json' },
  tempDirName: '.ferry-cache/stryker-tmp',
  incremental: true,
  incrementalFile: '.ferry-cache/mutation/stryker-incremental.json',
  cleanTempDir: 'always',
  thresholds: { high: 90, low: 85, break: null },
};
