/**
 * A `ferry run` reduced to one worker batch, as a child process the kill test can SIGKILL
 * (src/run/kill-batch.real.test.ts): the plan's own builders make cordon → drain-batch → decommission
 * for the nodes given, and the production orchestrator, journal and KubeAdmin run them against the
 * lab API server of the parent process. The provisioner is a stand-in that writes each
 * decommission to a file, with the evictable pods the node still held at that moment.
 *
 * Test-only: nothing under src/ imports this file.
 *   node --import tsx src/run/testing-drain-batch-child.ts CONFIG.json
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { KubeAdmin } from '../adapters/kube/admin.js';
import { drainBatchStep } from '../plan/drain-batch-step.js';
import type { KubeadmNodeRef } from '../plan/expected-state.js';
import { type DraftStep, type Plan, type Step, stepId } from '../plan/model.js';
import { cordonStep, decommissionStep } from '../plan/node-steps.js';
import type { EtcdAdminPort, ProvisionerPort } from '../ports/run.js';
import { Journal } from './journal.js';
import { runPlan } from './orchestrator.js';

export interface ChildConfig {
  kubeconfig: string;
  planFile: string;
  journal: string;
  /** One line per decommission: "NODE PODS-LEFT". */
  decommissionLog: string;
  nodes: string[];
  resume: boolean;
}

const cfg = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as ChildConfig;
const refs: KubeadmNodeRef[] = cfg.nodes.map((name) => ({ kind: 'kubeadm', name, address: '127.0.111.50' }));
const drafts: DraftStep[] = [
  ...refs.map((node) => cordonStep({ subject: node.name, batch: 1, node })),
  drainBatchStep({
    batch: 1,
    nodes: refs.map((node) => ({ node, info: { pdbs: [], pods: 0 } })),
    perNodeTimeoutSeconds: 120,
  }),
  ...refs.map((node) =>
    decommissionStep({
      subject: node.name,
      batch: 1,
      node,
      provisioner: 'exec',
      role: 'worker',
      comesBack: false,
    }),
  ),
];
const steps = drafts.map((d, i) => ({
  ...d,
  id: stepId(3, i + 1, 2, d.kind, d.subject),
  phase: 3,
  index: i + 1,
})) as Step[];
const plan = {
  phases: [{ id: 3, name: 'workers', title: '', summary: '', steps }],
  controlPlanes: [],
  audit: { blockers: [], risks: 0, suppressed: 0, allowBlockers: false },
  cluster: { name: 'kill-batch', endpoint: null },
} as unknown as Plan;

const kube = KubeAdmin.fromKubeconfig({ kubeconfig: cfg.kubeconfig });
const decommissioned = () =>
  existsSync(cfg.decommissionLog)
    ? readFileSync(cfg.decommissionLog, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ')[0])
    : [];
const provisioner: ProvisionerPort = {
  kind: 'stand-in',
  provision: async () => {
    throw new Error('no provision in this plan');
  },
  async decommission(req) {
    const left = (await kube.podsOnNode(req.node)).filter((p) => !p.ignoredByDrain).length;
    appendFileSync(cfg.decommissionLog, `${req.node} ${left}\n`);
  },
  machineState: async (node) => (decommissioned().includes(node) ? 'decommissioned' : 'running'),
};
const etcd = {
  observe: async () => ({ members: [], statuses: [], leaderId: undefined, healthy: [] }),
  endpoints: () => [],
} as unknown as EtcdAdminPort;

const journal = Journal.open(cfg.journal);
journal.beginRun({
  planFile: cfg.planFile,
  planDigest: 'kill-batch',
  steps: steps.map((s, i) => ({
    id: s.id,
    position: i,
    kind: s.kind,
    subject: s.subject,
    destructive: s.destructive,
    title: s.title,
  })),
});
const r = await runPlan(
  {
    plan,
    planFile: cfg.planFile,
    journal,
    etcd,
    kube,
    provisioner,
    lb: undefined,
    operator: { instruct: () => {}, ask: async () => true },
    log: (l) => console.log(l),
  },
  { resume: cfg.resume, pollMs: 50, gateGraceSeconds: 10, drainConcurrency: 2 },
);
journal.close();
if (r.status !== 'completed') console.log(`stopped: ${r.error?.message}`);
process.exit(r.status === 'completed' ? 0 : 3);
