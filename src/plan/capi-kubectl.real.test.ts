/**
 * The runbook of a capi plan, typed as written: the commands of its provision steps (`ferry capi
 * add-control-plane` with the TalosControlPlane kept paused; a pool's MachineDeployment scaled),
 * of adoption's status-subresource patch and of the hand-over's unpause are run by bash (ferry
 * being this checkout's CLI) with the real kubectl against a lab API server serving the Cluster API CRDs (127.0.167.1; this
 * engineer's range 127.0.165–169), with the controllers' test-side stand-in creating Machines.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { adopt } from '../adapters/capi/adopt-apply.js';
import { standInControllers, startTestMgmt, type TestMgmt } from '../adapters/capi/testing-mgmt.js';
import { CrdValidator } from '../generate/schema/crd.js';
import type { KitSummary } from '../kit/read.js';
import { writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import { installLabCapiCrds } from '../lab/capi/crds.js';
import { kubectlMissing, skipFor } from '../lab/testing-binaries.js';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import { buildPlan } from './build.js';
import { allSteps, type Plan, type Step } from './model.js';
import { inputsFor } from './testing-example.js';

const run = promisify(execFile);
const noKubectl = await kubectlMissing();

let m: TestMgmt;
let dir: string;
let plan: Plan;

beforeAll(async () => {
  m = await startTestMgmt('127.0.167.1');
  dir = await mkdtemp(join(tmpdir(), 'ferry-capi-runbook-'));
  await writeAdminKubeconfig(m.lab, join(dir, 'mgmt.kubeconfig'));
  await installLabCapiCrds(m.req);
  // The kit on disk, as `ferry capi add-control-plane kit` reads it.
  await mkdir(join(dir, 'kit/capi'), { recursive: true });
  const docs = (xs: unknown[]) => xs.map((o) => stringify(o)).join('---\n');
  await writeFile(join(dir, 'kit/capi/secrets.yaml'), docs(m.kit.filter((o) => o.kind === 'Secret')), {
    mode: 0o600,
  });
  await writeFile(join(dir, 'kit/capi/cluster.yaml'), docs(m.kit.filter((o) => o.kind !== 'Secret')));
  await writeFile(
    join(dir, 'kit/provenance.json'),
    JSON.stringify({
      kind: 'FerryKitProvenance',
      target: { provisioner: 'capi', infra: 'proxmox' },
      files: [
        { path: 'capi/secrets.yaml', step: 40, secret: true },
        { path: 'capi/cluster.yaml', step: 41, secret: false },
      ],
    }),
  );
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

/** The runbook's `ferry` is this checkout's CLI; commands run in the directory holding the kit. */
const FERRY = `ferry() { node --import ${JSON.stringify(pathToFileURL(resolve('node_modules/tsx/dist/loader.mjs')).href)} ${JSON.stringify(resolve('src/cli/main.ts'))} "$@"; }`;

async function bash(commands: string[]): Promise<void> {
  await run('bash', ['-euo', 'pipefail', '-c', [FERRY, ...commands].join('\n')], {
    cwd: dir,
    env: { ...process.env, MGMT_KUBECONFIG: join(dir, 'mgmt.kubeconfig') },
    timeout: 120_000,
  });
}

const runs = (s: Step | undefined) => (s?.action.commands ?? []).map((c) => c.run);
const notWatching = (c: string) => !c.includes(' -w');

describe.skipIf(skipFor(noKubectl))("a capi plan's runbook, typed as written", () => {
  it('adoption leaves it bootstrapped and paused; a control plane is added with the TalosControlPlane kept paused; the hand-over unpauses', async () => {
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
      expect(cpCmds.join('\n')).not.toMatch(/paused-|unpause/);
      await bash(cpCmds.filter(notWatching));
      expect(await m.api.controlPlane()).toMatchObject({ paused: true, replicas: 1 });
      expect(await m.api.machines({ controlPlane: true })).toHaveLength(1);
      // Typed twice: no second Machine.
      await bash(cpCmds.filter(notWatching));
      expect(await m.api.machines({ controlPlane: true })).toHaveLength(1);

      // A worker batch's request: its pool to the count of the batch's replacements, once typed
      // or twice; its detection is a watch only.
      const worker = allSteps(plan).find((s) => s.kind === 'provision-request');
      const batch = worker?.kind === 'provision-request' ? worker.params.machines.length : 0;
      expect(batch).toBeGreaterThan(0);
      await bash(runs(worker).filter(notWatching));
      await bash(runs(worker).filter(notWatching));
      const md = m.api.names.machineDeployments[0]!.name;
      expect(await m.api.machineDeploymentReplicas(md)).toBe(batch);
      const detect = allSteps(plan).find((s) => s.kind === 'provision-detect');
      expect(runs(detect).every((c) => c.includes(' -w'))).toBe(true);
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
