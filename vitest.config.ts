import { defineConfig } from 'vitest/config';
import { measureSlowness } from './src/util/testing-slowness.js';

// Hang guards scale with the machine's speed at the start of the run (src/util/testing-slowness.ts);
// the workers inherit the factor.
const slowness = measureSlowness();
process.env.FERRY_TEST_SLOWNESS = String(slowness);
if (slowness > 1)
  console.log(`ferry tests: this machine runs ${slowness}× slow; hang guards scaled to match`);

/**
 * Files that start real servers (etcd members, a lab) and judge what they see by time: probe
 * deadlines, elections, write gaps. They run one at a time, after the other files, so that two labs
 * never compete for the machine's two cores: on CI a rehearsal run beside the fault suite saw one
 * write-then-read take over its 2 s deadline, which it rightly counts as an API error.
 */
const REAL_SERVERS = [
  'src/adapters/etcd/admin.test.ts',
  'src/adapters/kube/admin.test.ts',
  'src/adapters/kube/request.test.ts',
  'src/adapters/probes/probes.test.ts',
  'src/adapters/provisioners/manual-errors.test.ts',
  'src/adapters/provisioners/capi.test.ts',
  // Headless chromium over the 5,000-node HTML report: no server, but minutes of CPU.
  'src/audit/reporters/browser.test.ts',
  'src/capi/{adopt-apply,hazards,mgmt-reader}.test.ts',
  'src/cli/lab.test.ts',
  'src/cli/capi.test.ts',
  'src/cli/mgmt.test.ts',
  'src/lab/apiserver/{adapter,crd,crud,etcd,eviction,kubectl,semantics,watch}.test.ts',
  'src/lab/canary.test.ts',
  'src/mgmt/roundtrip.test.ts',
  'src/mgmt/restore-kind/restore-kind.test.ts',
  'src/mgmt/via-clusterctl/via-clusterctl.test.ts',
  'src/lab/capi/{bootstrap,etcd-audit,machineset,scale-down}.test.ts',
  'src/lab/capi/{h4,reconciler,reconciler-h1}.test.ts',
  'src/lab/capi/recipe-c.test.ts',
  'src/lab/cluster.test.ts',
  'src/lab/etcd/cluster.test.ts',
  'src/lab/lb/balancer.test.ts',
  'src/lab/provisioner/provisioner.test.ts',
  'src/plan/capi-kubectl.test.ts',
  'src/run/crash-sweep.test.ts',
  'src/run/drain-nodes.test.ts',
  'src/run/handlers/capi.test.ts',
  'src/run/faults.test.ts',
  'src/run/kill-batch.test.ts',
  'src/run/kill-resume.test.ts',
  'src/run/rehearse.test.ts',
  'src/run/rehearse-capi.test.ts',
  'src/run/unobserved.test.ts',
  'src/snapshot/collect-faults.test.ts',
  'src/snapshot/collect-lab.test.ts',
  'src/snapshot/collect-version.test.ts',
];

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
