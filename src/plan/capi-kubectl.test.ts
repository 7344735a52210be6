/**
 * The runbook of a capi plan, typed as written: the kubectl commands of its provision steps (the
 * TalosControlPlane unpaused for one scale step, scaled, paused again; a pool's MachineDeployment
 * scaled), of adoption's status-subresource patch and of the hand-over's unpause are run by bash
 * with the real kubectl against a lab API server serving the Cluster API CRDs (127.0.167.1; this
 * engineer's range 127.0.165–169), with the controllers' test-side stand-in creating Machines.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleSnapshot } from '../../test/support/example.js';
import { inputsFor } from '../../test/support/example-plan.js';
import { standInControllers, startTestMgmt, type TestMgmt } from '../adapters/capi/testing-mgmt.js';
import { adopt } from '../capi/adopt-apply.js';
import { CrdValidator } from '../generate/schema/crd.js';
import type { KitSummary } from '../kit/read.js';
import { writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import { buildPlan } from './build.js';
import { allSteps, type Plan, type Step } from './model.js';

const run = promisify(execFile);
const kubectlMissing = await run('kubectl', ['version', '--client']).then(
  () => false,
  () => true,
);

let m: TestMgmt;
let dir: string;
let plan: Plan;

beforeAll(async () => {
  m = await startTestMgmt('127.0.167.1');
  dir = await mkdtemp(join(tmpdir(), 'ferry-capi-runbook-'));
  await writeAdminKubeconfig(m.lab, join(dir, 'mgmt.kubeconfig'));
  const snapshot = await exampleSnapshot();
  const base = inputsFor(snapshot, { target: { provisioner: 'capi' } });
  const workers = buildPlan(base).workers.map((w) => w.node);
  const names = {
    ...m.api.names,
    machineDeployments: [{ name: m.api.names.machineDeployments[0]!.name, replaces: workers }],
  };
  const kit: KitSummary = {
    path: 'kit',
    generatedAt: null,
    snapshot: { createdAt: null, source: null },
    target: {
      talosVersion: null,
      kubernetesVersion: null,
      kubeprism: null,
      provisioner: 'capi',
      infra: 'proxmox',
    },
    files: [],
    prepSteps: [],
    probe: null,
    bootstrapTokenId: null,
    machines: null,
    talosconfig: null,
    capi: names,
  };
  plan = buildPlan(inputsFor(snapshot, { target: { provisioner: 'capi' }, kit }));
}, 120_000);
afterAll(async () => {
  await m?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function bash(commands: string[]): Promise<void> {
  await run('bash', ['-euo', 'pipefail', '-c', commands.join('\n')], {
    env: { ...process.env, MGMT_KUBECONFIG: join(dir, 'mgmt.kubeconfig') },
    timeout: 120_000,
  });
}

const runs = (s: Step | undefined) => (s?.action.commands ?? []).map((c) => c.run);
const notWatching = (c: string) => !c.includes(' -w');

describe.skipIf(kubectlMissing)("a capi plan's runbook, typed as written", () => {
  it('adoption leaves it bootstrapped and paused; the provision steps scale by one in an unpause window; the hand-over unpauses', async () => {
    await adopt(m.req, m.kit, { kubeadmMembersRemain: true, crds: CrdValidator.fromSchemas() });
    // Adoption's own kubectl: the status subresource patch and the pause, again (idempotent).
    const adoptCmds = runs(allSteps(plan).find((s) => s.kind === 'capi-adopt')).filter(
      (c) => c.includes('--subresource=status') || c.includes('paused=true'),
    );
    expect(adoptCmds).toHaveLength(2);
    await bash(adoptCmds);
    expect(await m.api.controlPlane()).toMatchObject({ paused: true, replicas: 0 });

    const ctl = standInControllers(m);
    try {
      const cp = allSteps(plan).find((s) => s.kind === 'provision' && s.params.role === 'controlplane');
      const cpCmds = runs(cp);
      expect(cpCmds.some((c) => c.includes(' -w'))).toBe(true);
      await bash(cpCmds.filter(notWatching));
      expect(await m.api.controlPlane()).toMatchObject({ paused: true, replicas: 1 });
      expect(await m.api.machines({ controlPlane: true })).toHaveLength(1);

      const worker = allSteps(plan).find((s) => s.kind === 'provision' && s.params.role === 'worker');
      await bash(runs(worker).filter(notWatching));
      const md = m.api.names.machineDeployments[0]!.name;
      expect(await m.api.machineDeploymentReplicas(md)).toBe(1);
    } finally {
      await ctl.stop();
    }

    const hand = runs(allSteps(plan).find((s) => s.kind === 'capi-handover')).filter((c) =>
      c.startsWith('kubectl'),
    );
    await bash(hand);
    expect((await m.api.controlPlane())?.paused).toBe(false);
  });
});
