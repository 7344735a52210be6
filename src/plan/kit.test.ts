import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { readKit } from '../kit/read.js';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import { buildPlan } from './build.js';
import { parsePlan } from './load.js';
import { allSteps } from './model.js';
import { renderPlanJson } from './render-json.js';
import { inputsFor, provisioningOf, stepsOfPhase } from './testing-example.js';

/** A value that must never reach a plan: it stands for the bundle's private material. */
const SECRET = 'c2VjcmV0LWtleS1tYXRlcmlhbC1uZXZlci1pbi1hLXBsYW4=';

const STEPS = {
  kind: 'FerryKubeadmPrep',
  version: 1,
  steps: [
    {
      id: '10-apiserver-sans',
      title: 'Re-issue each kubeadm apiserver certificate with 127.0.0.1 and localhost',
      scope: 'each-control-plane',
      nodes: ['cp-1', 'cp-2', 'cp-3'],
      after: [],
      apply: 'sh kubeadm/10-apiserver-sans.sh apply NODE',
      verify: 'sh kubeadm/10-apiserver-sans.sh verify NODE',
      undo: 'sh kubeadm/10-apiserver-sans.sh undo NODE',
      why: 'KubePrism needs 127.0.0.1 in the SANs (apiserver.san-loopback)',
    },
    {
      id: '15-kubeadm-config',
      title: 'Store the new certSANs in kube-system/kubeadm-config',
      scope: 'cluster',
      nodes: [],
      after: ['10-apiserver-sans'],
      apply: 'sh kubeadm/15-kubeadm-config.sh apply',
      verify: 'sh kubeadm/15-kubeadm-config.sh verify',
      undo: 'sh kubeadm/15-kubeadm-config.sh undo',
      why: 'kubeadm upgrades regenerate certificates from it',
    },
  ],
};

const CONTROL_PLANES = ['cp-1', 'cp-2', 'cp-3'];
const WORKERS = ['worker-1', 'worker-2', 'worker-3', 'worker-4', 'worker-5'];

/** talos/machines.json as ferry generate writes it for the example's eight nodes. */
function machinesIndex(refused: string | null = null) {
  return {
    kind: 'FerryTalosMachines',
    version: 1,
    secrets: 'secrets.yaml',
    talosconfig: 'talos/talosconfig',
    genConfig: {
      clusterName: 'lab',
      endpoint: 'https://k8s-api.lab.example:6443',
      talosVersion: 'v1.13',
      kubernetesVersion: '1.32.4',
      refused,
    },
    machines: [
      ...CONTROL_PLANES.map((n) => ({
        role: 'controlplane',
        replaces: n,
        hostname: `talos-${n}`,
        config: `talos/full/talos-${n}.yaml`,
        patches: ['talos/controlplane-patch.yaml', `talos/nodes/talos-${n}.yaml`],
      })),
      ...WORKERS.map((n) => ({
        role: 'worker',
        replaces: n,
        hostname: null,
        config: `talos/full/replacing-${n}.yaml`,
        patches: ['talos/worker-patch.yaml', 'talos/worker-groups/pool-general-1.yaml'],
      })),
    ],
  };
}

const file = (path: string, secret = false) => ({
  path,
  purpose: path,
  step: 30,
  mode: secret ? '0600' : '0644',
  secret,
});

function provenance(createdAt: string, source: string, bootstrapTokenId?: string) {
  return {
    kind: 'FerryKitProvenance',
    version: 1,
    generatedAt: '2026-09-01T10:00:00.000Z',
    ...(bootstrapTokenId !== undefined && { bootstrapTokenId }),
    snapshot: { createdAt, source, parts: [] },
    target: {
      talosVersion: 'v1.13.9',
      kubernetesVersion: 'v1.32.4',
      kubeprism: 'on',
      provisioner: 'manual',
      infra: 'generic',
    },
    files: [
      { path: 'secrets.yaml', purpose: 'Talos secrets bundle', step: 10, mode: '0600', secret: true },
      { path: 'rbac/health-probe.yaml', purpose: 'probe identity', step: 15, mode: '0644', secret: false },
      { path: 'kubeadm/steps.json', purpose: 'steps', step: 20, mode: '0644', secret: false },
      {
        path: 'talos/controlplane-patch.yaml',
        purpose: 'control-plane patch',
        step: 30,
        mode: '0644',
        secret: false,
      },
      { path: 'talos/worker-patch.yaml', purpose: 'worker patch', step: 30, mode: '0644', secret: false },
      ...CONTROL_PLANES.flatMap((n) => [
        file(`talos/nodes/talos-${n}.yaml`),
        file(`talos/full/talos-${n}.yaml`, true),
      ]),
      file('talos/worker-groups/pool-general-1.yaml'),
      ...WORKERS.map((n) => file(`talos/full/replacing-${n}.yaml`, true)),
      file('talos/machines.json'),
      file('talos/talosconfig', true),
    ],
    notes: [],
  };
}

const PROBE = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: probe-sa
  namespace: monitoring
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: probe}
rules: []
`;

describe('readKit and the preparation phase', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-plan-kit-'));
    await mkdir(join(dir, 'kubeadm'), { recursive: true });
    await mkdir(join(dir, 'rbac'), { recursive: true });
    await writeFile(join(dir, 'kubeadm', 'steps.json'), JSON.stringify(STEPS));
    await writeFile(join(dir, 'rbac', 'health-probe.yaml'), PROBE);
    await writeFile(join(dir, 'secrets.yaml'), `cluster:\n  secret: ${SECRET}\n`, { mode: 0o600 });
    await mkdir(join(dir, 'talos'), { recursive: true });
    await writeFile(join(dir, 'talos', 'machines.json'), JSON.stringify(machinesIndex()));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function kitFor(bootstrapTokenId?: string) {
    const snap = await exampleSnapshot();
    const facts = inputsFor(snap).facts;
    await writeFile(
      join(dir, 'provenance.json'),
      JSON.stringify(provenance(facts.snapshot.createdAt, facts.snapshot.source, bootstrapTokenId)),
    );
    return { snap, kit: await readKit(dir, 'kit') };
  }

  it('reads the kit summary: files, kubeadm steps, probe identity', async () => {
    const { kit } = await kitFor();
    expect(kit.path).toBe('kit');
    expect(kit.target.talosVersion).toBe('v1.13.9');
    expect(kit.files.find((f) => f.path === 'secrets.yaml')?.secret).toBe(true);
    expect(kit.prepSteps.map((s) => s.id)).toEqual(['10-apiserver-sans', '15-kubeadm-config']);
    expect(kit.probe).toEqual({ namespace: 'monitoring', name: 'probe-sa' });
  });

  it("after-care deletes the kit's bootstrap token by its id; without one it says where to find the id", async () => {
    const tokenStep = (plan: ReturnType<typeof buildPlan>) =>
      stepsOfPhase(plan, 5).find((s) => s.kind === 'delete-bootstrap-token')!;
    const { snap, kit } = await kitFor('k1t0ke');
    expect(kit.bootstrapTokenId).toBe('k1t0ke');
    const step = tokenStep(buildPlan(inputsFor(snap, { kit })));
    expect(step.kind === 'delete-bootstrap-token' && step.params.tokenIds[0]).toBe('k1t0ke');
    expect(step.action.commands[0]?.run).toContain('delete secret bootstrap-token-k1t0ke');
    expect(JSON.stringify(step)).not.toContain('<TOKEN_ID>');

    // A kit from before the id was recorded, or no kit: the placeholder and its explanation.
    const { kit: old } = await kitFor();
    expect(old.bootstrapTokenId).toBeNull();
    const withoutKit = tokenStep(buildPlan(inputsFor(snap)));
    expect(withoutKit.action.commands.some((c) => c.run.includes('<TOKEN_ID>'))).toBe(
      snap.resources.bootstrapTokens.every((t) => t.expiration),
    );
  });

  it('turns kit steps into per-node preparation steps, in order, with their dependencies', async () => {
    const { snap, kit } = await kitFor();
    const plan = buildPlan(inputsFor(snap, { kit }));
    const prep = stepsOfPhase(plan, 1).filter((s) => s.kind === 'kubeadm-prep');
    expect(prep.map((s) => s.subject)).toEqual(['cp-1', 'cp-2', 'cp-3', 'cluster']);
    const first = prep[0]!;
    expect(first.action.commands[0]).toMatchObject({
      run: 'sh kubeadm/10-apiserver-sans.sh apply cp-1',
      where: { kind: 'node', node: 'cp-1' },
    });
    expect(first.verify.expect.commands?.[0]?.command.run).toBe(
      'sh kubeadm/10-apiserver-sans.sh verify cp-1',
    );
    expect(first.undo.possible && first.undo.commands[0]?.run).toBe(
      'sh kubeadm/10-apiserver-sans.sh undo cp-1',
    );
    // 15 waits for 10 on every node.
    expect(prep[3]!.after).toEqual(prep.slice(0, 3).map((s) => s.id));
    const probe = stepsOfPhase(plan, 1).find(
      (s) => s.kind === 'apply-kit-file' && s.params.purpose === 'probe-rbac',
    );
    expect(probe?.verify.commands[0]?.run).toContain('system:serviceaccount:monitoring:probe-sa');
    // Provisioning applies each node's complete config (talos/machines.json); the plan lists the files it refers to.
    const provision = allSteps(plan).filter((s) => s.kind === 'provision' || s.kind === 'provision-request');
    const cp1 = provision.find((s) => s.subject === 'cp-1')!;
    const cp1Runs = cp1.action.commands.map((c) => c.run);
    expect(cp1Runs).toContain(
      'talosctl --talosconfig "$TALOSCONFIG" apply-config --insecure -n <ADDRESS_OF_TALOS_CP_1> --file kit/talos/full/talos-cp-1.yaml',
    );
    expect(cp1.kind === 'provision' && cp1.params.machineConfig).toBe('kit/talos/full/talos-cp-1.yaml');
    // The alternative: the same config from the patches, with real talosctl flags and kit paths.
    expect(cp1Runs.at(-1)).toBe(
      '# or build your own config from the patches and apply talos-cp-1.yaml instead of kit/talos/full/talos-cp-1.yaml: ' +
        'talosctl gen config lab https://k8s-api.lab.example:6443 --with-secrets kit/secrets.yaml --talos-version v1.13 ' +
        '--kubernetes-version 1.32.4 --output-types controlplane --config-patch @kit/talos/controlplane-patch.yaml ' +
        '--config-patch @kit/talos/nodes/talos-cp-1.yaml --output talos-cp-1.yaml',
    );
    const worker = provisioningOf(plan, 'worker-1')!;
    expect(worker.machine.machineConfig).toBe('kit/talos/full/replacing-worker-1.yaml');
    expect(worker.step.action.commands.at(-1)?.run).toContain(
      '--output-types worker --config-patch @kit/talos/worker-patch.yaml --config-patch @kit/talos/worker-groups/pool-general-1.yaml',
    );
    // Never a patch as the file to apply.
    for (const s of provision) expect(JSON.stringify(s.params)).not.toMatch(/-patch\.yaml|talos\/nodes\//);
    // Every talosctl command names the kit's talosconfig, set once in the setup.
    expect(plan.setup.map((c) => c.run)).toContain('export TALOSCONFIG=kit/talos/talosconfig');
    const runs = allSteps(plan).flatMap((s) => [
      ...s.action.commands,
      ...s.verify.commands,
      ...(s.undo.possible ? s.undo.commands : []),
    ]);
    const talosctl = runs.map((c) => c.run).filter((r) => /^talosctl (?!gen config)/.test(r));
    expect(talosctl.length).toBeGreaterThan(10);
    for (const r of talosctl) expect(r).toMatch(/^talosctl --talosconfig "\$TALOSCONFIG" /);
    expect(plan.source.kit?.files).toEqual(
      expect.arrayContaining(['rbac/health-probe.yaml', 'talos/controlplane-patch.yaml', 'secrets.yaml']),
    );
    // Secret kit files are named for wiping, never read.
    const wipe = stepsOfPhase(plan, 5).find((s) => s.kind === 'wipe-pki-copies');
    expect(wipe?.kind === 'wipe-pki-copies' && wipe.params.copies.map((c) => c.path)).toEqual(
      expect.arrayContaining(['kit/secrets.yaml', 'kit/talos/talosconfig', 'kit/talos/full/talos-cp-1.yaml']),
    );
    expect(renderPlanJson(plan)).not.toContain(SECRET);
    // A plan with a kit loads as it was built.
    expect(parsePlan(renderPlanJson(plan), 'plan.json')).toEqual(plan);
    expect(plan.warnings.join(' ')).not.toContain('the kit was generated from');
  });

  it('a kit whose secrets.yaml talosctl refuses: the runbook says so instead of a command that fails', async () => {
    await writeFile(
      join(dir, 'talos', 'machines.json'),
      JSON.stringify(
        machinesIndex('talosctl gen config refuses this secrets.yaml: it has no encryption secret'),
      ),
    );
    const { snap, kit } = await kitFor();
    const cp1 = allSteps(buildPlan(inputsFor(snap, { kit }))).find(
      (s) => s.kind === 'provision' && s.subject === 'cp-1',
    )!;
    const last = cp1.action.commands.at(-1)!.run;
    expect(last).toMatch(
      /^# build your own config instead \(talosctl gen config --with-secrets … --config-patch @kit\/talos\/controlplane-patch\.yaml --config-patch @kit\/talos\/nodes\/talos-cp-1\.yaml\): not with this kit, talosctl gen config refuses/,
    );
    expect(cp1.action.commands.map((c) => c.run)).toContain(
      'talosctl --talosconfig "$TALOSCONFIG" apply-config --insecure -n <ADDRESS_OF_TALOS_CP_1> --file kit/talos/full/talos-cp-1.yaml',
    );
  });

  it('a kit without complete configs (older ferry): no file to apply, never a patch, and why', async () => {
    const { snap, kit } = await kitFor();
    const plan = buildPlan(inputsFor(snap, { kit: { ...kit, machines: null } }));
    for (const s of allSteps(plan).filter((x) => x.kind === 'provision' || x.kind === 'provision-request')) {
      const machines =
        s.kind === 'provision' ? [s.params] : s.kind === 'provision-request' ? s.params.machines : [];
      for (const m of machines) expect(m.machineConfig).toBeNull();
      const runs = s.action.commands.map((c) => c.run).join('\n');
      expect(runs).toMatch(/--file <(CONTROLPLANE|WORKER)_MACHINE_CONFIG>/);
      expect(runs).not.toMatch(/-patch\.yaml/);
      expect(s.notes?.join(' ')).toContain('talos/machines.json');
    }
  });

  it('rejects talos/machines.json naming a file the kit does not list', async () => {
    const broken = machinesIndex();
    broken.machines[0]!.config = 'talos/full/elsewhere.yaml';
    await writeFile(join(dir, 'talos', 'machines.json'), JSON.stringify(broken));
    const err = await kitFor().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).location).toMatchObject({
      file: 'kit/talos/machines.json',
      field: 'machines[0].config',
    });
  });

  it('warns when the kit was made from another cluster', async () => {
    const snap = await exampleSnapshot();
    await writeFile(
      join(dir, 'provenance.json'),
      JSON.stringify(provenance('2026-01-01T00:00:00Z', 'files /elsewhere')),
    );
    const kit = await readKit(dir, 'kit');
    const plan = buildPlan(inputsFor(snap, { kit }));
    expect(plan.warnings.join(' ')).toContain('the kit was generated from files /elsewhere');
  });

  it('rejects a directory that is not a kit, naming the file', async () => {
    await expect(readKit(dir, 'kit')).rejects.toThrow(/provenance.json/);
    await writeFile(join(dir, 'provenance.json'), JSON.stringify({ kind: 'Something' }));
    const err = await readKit(dir, 'kit').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).exitCode).toBe(2);
    expect((err as FerryError).location).toMatchObject({ file: 'kit/provenance.json', field: 'kind' });
  });

  it('rejects kubeadm/steps.json with a step missing its verify command', async () => {
    const snap = await exampleSnapshot();
    const facts = inputsFor(snap).facts;
    await writeFile(
      join(dir, 'provenance.json'),
      JSON.stringify(provenance(facts.snapshot.createdAt, facts.snapshot.source)),
    );
    const broken = structuredClone(STEPS) as { steps: Record<string, unknown>[] };
    delete broken.steps[1]!['verify'];
    await writeFile(join(dir, 'kubeadm', 'steps.json'), JSON.stringify(broken));
    const err = await readKit(dir, 'kit').catch((e: unknown) => e);
    expect((err as FerryError).location).toMatchObject({
      file: 'kit/kubeadm/steps.json',
      field: 'steps[1].verify',
    });
  });

  it('without a kit, the preparation points at ferry generate', async () => {
    const plan = buildPlan(inputsFor(await exampleSnapshot()));
    const phase1 = stepsOfPhase(plan, 1);
    expect(phase1[0]?.action.commands.map((c) => c.run).join('\n')).toMatch(
      /^ferry generate examples\/lab-cluster /,
    );
    const themes = phase1.flatMap((s) =>
      s.kind === 'kubeadm-prep' && s.params.source.kind === 'generate' ? [s.params.source.theme] : [],
    );
    // The example: KubePrism on without loopback SANs, kubeadm's issuer, an aescbc key named key-2023.
    expect(themes).toEqual(['apiserver-sans', 'sa-issuer', 'encryption-keys']);
  });
});
