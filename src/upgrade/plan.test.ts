import { describe, expect, it } from 'vitest';
import { readManifests } from '../cli/upgrade-manifests.js';
import { blockerExit, describeBlocker } from './blockers.js';
import type { UpgradeInput, Write } from './model.js';
import { buildUpgradePlan } from './plan.js';
import { renderUpgradePlan } from './render.js';
import { type LabMgmtOptions, labMgmt, labWorkload, type WorkloadOptions } from './testing.js';

function input(
  o: Partial<UpgradeInput> & { mgmtOpts?: LabMgmtOptions; workloadOpts?: WorkloadOptions | null } = {},
): UpgradeInput {
  const { mgmtOpts, workloadOpts, ...rest } = o;
  return {
    cluster: { namespace: 'lab', name: 'lab' },
    mgmt: labMgmt(mgmtOpts),
    workload: workloadOpts === null ? null : labWorkload(workloadOpts ?? {}),
    manifests: [],
    target: { kind: 'kubernetes', version: 'v1.33.2' },
    templateIds: [],
    surgeReplicas: false,
    ...rest,
  };
}

const kinds = (p: ReturnType<typeof buildUpgradePlan>) => p.blockers.map((b) => b.kind);
const patches = (ws: Write[]) => ws.flatMap((w) => (w.kind === 'patch' ? [w] : []));

describe('a Kubernetes upgrade', () => {
  it('one minor: the TalosControlPlane, then the pool with maxSurge from its budget, maxUnavailable 0', () => {
    const p = buildUpgradePlan(input());
    expect(p.blockers).toEqual([]);
    expect(p.current).toMatchObject({ kubernetes: 'v1.32.4', talos: 'v1.12.11' });
    expect(p.stages).toHaveLength(1);
    const [s] = p.stages;
    expect(s!.pools[0]).toMatchObject({ name: 'lab-workers', maxSurge: 1, maxUnavailable: 0, replicas: 4 });
    const ps = patches(s!.writes);
    expect(ps.map((x) => x.target)).toEqual([
      'TalosControlPlane lab/lab-control-plane',
      'MachineDeployment lab/lab-workers',
    ]);
    expect(ps[0]!.patch).toEqual({ spec: { version: 'v1.33.2' } });
    expect(ps[1]!.patch).toEqual({
      spec: {
        rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
        template: { spec: { version: 'v1.33.2' } },
      },
    });
    // The kit's TalosControlPlane rolls OnDelete: the plan deletes its Machines one at a time, oldest first.
    expect(s!.writes.map((w) => (w.kind === 'delete' ? `delete ${w.target}` : w.kind))).toEqual([
      'patch',
      'delete Machine lab/lab-control-plane-a',
      'wait',
      'delete Machine lab/lab-control-plane-b',
      'wait',
      'delete Machine lab/lab-control-plane-c',
      'wait',
      'patch',
      'wait',
    ]);
    expect(s!.seconds).toBeGreaterThan(0);
    expect(p.seconds).toBe(s!.seconds);
  });

  it('a RollingUpdate control plane is rolled by the provider; one replica with maxSurge 0 never would', () => {
    const i = input();
    const tcp = i.mgmt.objects.find((o) => o.kind === 'TalosControlPlane')!;
    tcp.spec.rolloutStrategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } };
    const s = buildUpgradePlan(i).stages[0]!;
    expect(s.writes.map((w) => w.kind)).toEqual(['patch', 'wait', 'patch', 'wait']);
    const one = input({ mgmtOpts: { cpReplicas: 1 } });
    const t = one.mgmt.objects.find((o) => o.kind === 'TalosControlPlane')!;
    t.spec.rolloutStrategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0 } };
    const p = buildUpgradePlan(one);
    expect(kinds(p)).toEqual(['control-plane-rollout-stuck']);
  });

  it('estimates every stage', () => {
    const p = buildUpgradePlan(input());
    const [s] = p.stages;
    expect(s!.seconds).toBeGreaterThan(0);
    expect(p.seconds).toBe(s!.seconds);
  });

  it('maxSurge is what the budget lets drain side by side, within a quarter of the pool', () => {
    const eight = Array.from({ length: 8 }, (_, i) => `lab-workers-${i}`);
    const at = (minAvailable: number) =>
      buildUpgradePlan(
        input({ mgmtOpts: { workers: eight }, workloadOpts: { workers: eight, minAvailable } }),
      ).stages[0]!.pools[0]!;
    expect(at(7)).toMatchObject({ replicas: 8, maxSurge: 1, maxUnavailable: 0 });
    expect(at(5)).toMatchObject({ maxSurge: 2, maxUnavailable: 0 });
    expect(at(7).why).toContain('1 of its 8 node(s)');
  });

  it('a skip plans consecutive stages and names where each intermediate patch comes from', () => {
    const p = buildUpgradePlan(input({ target: { kind: 'kubernetes', version: 'v1.35.0' } }));
    expect(p.blockers).toEqual([]);
    expect(p.stages.map((s) => `${s.from}→${s.to}`)).toEqual([
      'v1.32.4→v1.33.6',
      'v1.33.6→v1.34.1',
      'v1.34.1→v1.35.0',
    ]);
    expect(p.stages[0]!.versionSource).toContain('newest 1.33 patch ferry knows');
  });

  it("refuses a stage outside the Talos line's window (Talos v1.12 runs Kubernetes up to 1.35)", () => {
    const p = buildUpgradePlan(input({ target: { kind: 'kubernetes', version: 'v1.36.1' } }));
    expect(kinds(p)).toEqual(['kubernetes-outside-talos-window']);
    expect(blockerExit(p.blockers[0]!)).toBe(1);
  });

  it('refuses a pool whose kubelets the new control plane would leave too far behind', () => {
    const p = buildUpgradePlan(input({ workloadOpts: { kubelet: 'v1.29.8' } }));
    expect(kinds(p)).toContain('kubelet-skew');
  });

  it('refuses a downgrade (exit 2)', () => {
    const p = buildUpgradePlan(input({ target: { kind: 'kubernetes', version: 'v1.31.0' } }));
    expect(kinds(p)).toEqual(['downgrade']);
    expect(blockerExit(p.blockers[0]!)).toBe(2);
  });

  it('the same version: no stage, said as a warning', () => {
    const p = buildUpgradePlan(input({ target: { kind: 'kubernetes', version: 'v1.32.4' } }));
    expect(p.stages).toEqual([]);
    expect(p.warnings.join()).toContain('nothing to do');
  });

  it('a budget that allows no disruption blocks the pool; --surge-replicas scales the workload around it', () => {
    const blocked = buildUpgradePlan(input({ workloadOpts: { minAvailable: 4 } }));
    expect(kinds(blocked)).toEqual(['pdb-blocks-drain']);
    expect(describeBlocker(blocked.blockers[0]!).remediation).toContain('--surge-replicas');
    const surged = buildUpgradePlan(input({ workloadOpts: { minAvailable: 4 }, surgeReplicas: true }));
    expect(surged.blockers).toEqual([]);
    const scales = surged.stages[0]!.writes.filter((w) => w.kind === 'scale-workload');
    expect(scales).toMatchObject([
      { workload: 'Deployment shop/web', replicas: 5 },
      { workload: 'Deployment shop/web', replicas: 4 },
    ]);
  });

  it('without a workload cluster: one Machine at a time, and a warning that budgets were not checked', () => {
    const p = buildUpgradePlan(input({ workloadOpts: null }));
    expect(p.blockers).toEqual([]);
    expect(p.current.talos).toBe('v1.13');
    expect(p.stages[0]!.pools[0]).toMatchObject({ maxSurge: 1, maxUnavailable: 0 });
    expect(p.warnings.join()).toContain('not checked');
  });

  it('a workload list the server refused is not observed: a blocker, never an empty list', () => {
    const w = labWorkload();
    w.manifest.unobserved = [
      {
        input: 'poddisruptionbudgets',
        reason: 'forbidden',
        verb: 'list',
        group: 'policy',
        resource: 'poddisruptionbudgets',
        message: '403',
      },
    ];
    const p = buildUpgradePlan({ ...input(), workload: w });
    expect(kinds(p)).toEqual(['not-observed']);
    expect(blockerExit(p.blockers[0]!)).toBe(2);
  });
});

describe('refusals of the starting state', () => {
  it('a cluster the management cluster does not hold', () => {
    const p = buildUpgradePlan(input({ cluster: { namespace: 'lab', name: 'other' } }));
    expect(kinds(p)).toEqual(['cluster-not-found']);
  });

  it('a Cluster whose control plane is no TalosControlPlane', () => {
    const i = input();
    const cluster = i.mgmt.objects.find((o) => o.kind === 'Cluster')!;
    cluster.spec.controlPlaneRef = {
      apiGroup: 'controlplane.cluster.x-k8s.io',
      kind: 'KubeadmControlPlane',
      name: 'kcp',
    };
    expect(kinds(buildUpgradePlan(i))).toEqual(['no-talos-control-plane']);
  });

  it('a paused TalosControlPlane or Cluster', () => {
    expect(kinds(buildUpgradePlan(input({ mgmtOpts: { pauseControlPlane: true } })))).toEqual(['paused']);
    const p = buildUpgradePlan(input({ mgmtOpts: { pauseCluster: true } }));
    expect(describeBlocker(p.blockers[0]!).detail).toContain('Cluster lab/lab');
  });

  it('Machines of two versions: an upgrade already in progress', () => {
    const p = buildUpgradePlan(
      input({ mgmtOpts: { machineVersions: { 'lab-control-plane-a': 'v1.33.2' } } }),
    );
    expect(kinds(p)).toContain('upgrade-in-progress');
    expect(describeBlocker(p.blockers[0]!).detail).toContain('v1.33.2 (lab-control-plane-a)');
  });
});

describe('TalosConfig drift', () => {
  it("a control-plane Machine whose TalosConfig differs from the TalosControlPlane's is named", () => {
    const i = input();
    const tcp = i.mgmt.objects.find((o) => o.kind === 'TalosControlPlane')!;
    const m = i.mgmt.objects.find((o) => o.kind === 'Machine' && o.metadata.name === 'lab-control-plane-a')!;
    m.spec.bootstrap.configRef = {
      apiGroup: 'bootstrap.cluster.x-k8s.io',
      kind: 'TalosConfig',
      name: 'tc-a',
    };
    const same = {
      apiVersion: 'bootstrap.cluster.x-k8s.io/v1alpha3',
      kind: 'TalosConfig',
      metadata: { name: 'tc-a', namespace: 'lab' },
      spec: structuredClone(tcp.spec.controlPlaneConfig.controlplane),
    };
    i.mgmt.objects.push(same);
    expect(buildUpgradePlan(i).warnings.join()).not.toContain('TalosConfig differs');
    same.spec.strategicPatches = ['- op: add'];
    expect(buildUpgradePlan(i).warnings.join()).toContain('lab-control-plane-a: their TalosConfig differs');
  });
});

describe('a Talos upgrade', () => {
  const talos = (version: string, templateIds: string[] = ['9113'], more: Partial<UpgradeInput> = {}) =>
    buildUpgradePlan(input({ target: { kind: 'talos', version }, templateIds, ...more }));

  it('new templates with derived names and the new templateID, then the TalosControlPlane, then the pool', () => {
    const p = talos('v1.13.9');
    expect(p.blockers).toEqual([]);
    const [s] = p.stages;
    expect(`${s!.from}→${s!.to}`).toBe('v1.12.11→v1.13.9');
    const creates = s!.writes.flatMap((w) => (w.kind === 'create' ? [w.object] : []));
    expect(creates.map((o) => o.kind)).toEqual([
      'ProxmoxMachineTemplate',
      'ProxmoxMachineTemplate',
      'TalosConfigTemplate',
    ]);
    for (const o of creates.slice(0, 2)) expect(o.spec.template.spec.templateID).toBe(9113);
    expect(creates[0]!.metadata.name).toMatch(/^lab-control-plane-[0-9a-f]{8}$/);
    expect(creates[1]!.metadata.name).toMatch(/^lab-worker-[0-9a-f]{8}$/);
    expect(creates[2]!.spec.template.spec.talosVersion).toBe('v1.13');
    const ps = patches(s!.writes);
    expect(ps[0]!.patch).toEqual({
      spec: {
        controlPlaneConfig: { controlplane: { talosVersion: 'v1.13' } },
        infrastructureTemplate: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha2',
          kind: 'ProxmoxMachineTemplate',
          name: creates[0]!.metadata.name,
          namespace: 'lab',
        },
      },
    });
    expect((ps[1]!.patch as { spec: { template: unknown } }).spec.template).toEqual({
      spec: {
        bootstrap: {
          configRef: {
            apiGroup: 'bootstrap.cluster.x-k8s.io',
            kind: 'TalosConfigTemplate',
            name: creates[2]!.metadata.name,
          },
        },
        infrastructureRef: {
          apiGroup: 'infrastructure.cluster.x-k8s.io',
          kind: 'ProxmoxMachineTemplate',
          name: creates[1]!.metadata.name,
        },
      },
    });
    // Deterministic: the same input, the same names.
    expect(talos('v1.13.9').stages[0]!.writes).toEqual(s!.writes);
  });

  it('an already written template is not created again', () => {
    const first = talos('v1.13.9');
    const made = first.stages[0]!.writes.flatMap((w) => (w.kind === 'create' ? [w.object] : []));
    const i = input({ target: { kind: 'talos', version: 'v1.13.9' }, templateIds: ['9113'] });
    i.mgmt.objects.push(...made.filter((o) => o.kind === 'TalosConfigTemplate'));
    const again = buildUpgradePlan(i);
    expect(again.stages[0]!.writes.filter((w) => w.kind === 'create')).toHaveLength(2);
  });

  it('without --template-id: a blocker with the Image Factory commands', () => {
    const p = talos('v1.13.9', []);
    expect(kinds(p)).toEqual(['template-id-missing']);
    const t = describeBlocker(p.blockers[0]!);
    expect(t.remediation).toContain('https://factory.talos.dev/image/SCHEMATIC/v1.13.9/nocloud-amd64.raw.xz');
    expect(t.remediation).toContain('qm template NEW_ID');
  });

  it('a template id another template already uses is refused (exit 2)', () => {
    const p = talos('v1.13.9', ['9000']);
    expect(kinds(p)).toEqual(['template-id-in-use']);
    expect(describeBlocker(p.blockers[0]!).detail).toContain('ProxmoxMachineTemplate lab/lab-control-plane');
    expect(blockerExit(p.blockers[0]!)).toBe(2);
  });

  it('a skip goes through every minor, one template id per stage, each stage on the templates of the one before', () => {
    const p = talos('v1.13.9', ['9111', '9112', '9113'], { workload: labWorkload({ talos: 'v1.10.9' }) });
    expect(p.blockers).toEqual([]);
    expect(p.stages.map((s) => s.to)).toEqual(['v1.11.6', 'v1.12.11', 'v1.13.9']);
    const cpNames = p.stages
      .map((s) => s.writes.find((w) => w.kind === 'create')!)
      .map((w) => (w.kind === 'create' ? w.object.metadata.name : ''));
    expect(new Set(cpNames).size).toBe(3);
    for (const n of cpNames) expect(n).toMatch(/^lab-control-plane-[0-9a-f]{8}$/);
    const missing = talos('v1.13.9', ['9111'], { workload: labWorkload({ talos: 'v1.10.9' }) });
    expect(kinds(missing)).toEqual(['template-id-missing', 'template-id-missing']);
  });

  it('one id for two stages is refused too', () => {
    const p = talos('v1.13.9', ['9111', '9111', '9113'], { workload: labWorkload({ talos: 'v1.10.9' }) });
    expect(kinds(p)).toEqual(['template-id-in-use']);
    expect(describeBlocker(p.blockers[0]!).detail).toContain('the template of stage 1');
  });

  it('refuses a downgrade and a line ferry does not know', () => {
    expect(kinds(talos('v1.12.0'))).toEqual(['downgrade']);
    expect(kinds(talos('v1.16.0'))).toEqual(['talos-line-unknown']);
  });

  it("refuses a Talos line whose Kubernetes window leaves the cluster's version out", () => {
    const p = talos('v1.14.0-rc.1', ['9113', '9114'], { mgmt: labMgmt({ kubernetes: 'v1.31.4' }) });
    expect(kinds(p)).toEqual(['kubernetes-outside-talos-window']);
  });

  it('a template id the template kind cannot take is refused (exit 2)', () => {
    const p = talos('v1.13.9', ['talos-v1.13.9']);
    expect(kinds(p)).toEqual(['template-id-malformed']);
    expect(blockerExit(p.blockers[0]!)).toBe(2);
  });

  it('vSphere: the new template names the VM template given', () => {
    const i = input({ target: { kind: 'talos', version: 'v1.13.9' }, templateIds: ['talos-v1.13.9'] });
    for (const o of i.mgmt.objects) {
      if (o.kind === 'ProxmoxMachineTemplate') {
        o.kind = 'VSphereMachineTemplate';
        o.spec = { template: { spec: { server: 'vc', datacenter: 'dc', template: 'talos-v1.12.11' } } };
      }
      if (o.kind === 'TalosControlPlane') o.spec.infrastructureTemplate.kind = 'VSphereMachineTemplate';
      if (o.kind === 'MachineDeployment')
        o.spec.template.spec.infrastructureRef.kind = 'VSphereMachineTemplate';
    }
    const p = buildUpgradePlan(i);
    expect(p.blockers).toEqual([]);
    const made = p.stages[0]!.writes.flatMap((w) => (w.kind === 'create' ? [w.object] : []));
    expect(
      made.filter((o) => o.kind === 'VSphereMachineTemplate').map((o) => o.spec.template.spec.template),
    ).toEqual(['talos-v1.13.9', 'talos-v1.13.9']);
    const reused = buildUpgradePlan({ ...i, templateIds: ['talos-v1.12.11'] });
    expect(kinds(reused)).toEqual(['template-id-in-use']);
    const asked = buildUpgradePlan({ ...i, templateIds: [] });
    expect(describeBlocker(asked.blockers[0]!).remediation).toContain('vmware-amd64.ova');
  });

  it('an infrastructure template ferry cannot change is a blocker', () => {
    const i = input({ target: { kind: 'talos', version: 'v1.13.9' }, templateIds: ['9113'] });
    for (const o of i.mgmt.objects) if (o.kind === 'ProxmoxMachineTemplate') o.kind = 'OtherMachineTemplate';
    for (const o of i.mgmt.objects) {
      if (o.kind === 'TalosControlPlane') o.spec.infrastructureTemplate.kind = 'OtherMachineTemplate';
      if (o.kind === 'MachineDeployment')
        o.spec.template.spec.infrastructureRef.kind = 'OtherMachineTemplate';
    }
    expect(kinds(buildUpgradePlan(i))).toEqual(['infrastructure-unsupported', 'infrastructure-unsupported']);
  });
});

describe('removed APIs', () => {
  it('reports the fixture manifests that use a version the target removes, last-applied included', async () => {
    const manifests = await readManifests(
      new URL('./fixtures/manifests', import.meta.url).pathname,
      'fixtures/manifests',
    );
    expect(manifests.map((m) => `${m.file} ${m.object.kind}`)).toEqual([
      'fixtures/manifests/apps/old.yaml CronJob',
      'fixtures/manifests/apps/old.yaml HorizontalPodAutoscaler',
      'fixtures/manifests/apps/old.yaml Deployment',
      'fixtures/manifests/flow.json FlowSchema',
      'fixtures/manifests/flow.json PodDisruptionBudget',
    ]);
    const i = input({
      manifests,
      mgmt: labMgmt({ kubernetes: 'v1.24.9' }),
      workload: null,
      target: { kind: 'kubernetes', version: 'v1.25.3' },
    });
    // Talos v1.13's window starts at 1.31: the lab's TalosConfig line does not hold 1.25, which is not what this test is about.
    const found = buildUpgradePlan(i).blockers.filter((b) => b.kind === 'removed-api');
    expect(
      found.map((b) =>
        b.kind === 'removed-api' ? `${b.object} ${b.api.apiVersion} ${b.api.removedIn}` : '',
      ),
    ).toEqual([
      'CronJob shop/nightly batch/v1beta1 1.25',
      'PodDisruptionBudget shop/web policy/v1beta1 1.25',
    ]);
    const later = buildUpgradePlan({
      ...i,
      mgmt: labMgmt({ kubernetes: 'v1.31.4' }),
      target: { kind: 'kubernetes', version: 'v1.32.1' },
    });
    expect(
      later.blockers
        .filter((b) => b.kind === 'removed-api')
        .map((b) => (b.kind === 'removed-api' ? b.object : '')),
    ).toEqual(['FlowSchema batch-jobs']);
    expect(describeBlocker(later.blockers[0]!).remediation).toContain('flowcontrol.apiserver.k8s.io/v1');
  });

  it("the workload cluster's objects count too", () => {
    const cron = {
      apiVersion: 'batch/v1beta1',
      kind: 'CronJob',
      metadata: { name: 'old', namespace: 'shop' },
      spec: {},
    };
    const i = input({
      mgmt: labMgmt({ kubernetes: 'v1.24.9' }),
      workloadOpts: { extra: [cron], kubelet: 'v1.24.9' },
      target: { kind: 'kubernetes', version: 'v1.25.3' },
    });
    expect(kinds(buildUpgradePlan(i))).toContain('removed-api');
  });
});

describe('rendering', () => {
  it('markdown names the stages, the pools and the writes; JSON carries each blocker with its text and exit', () => {
    const p = buildUpgradePlan(
      input({ target: { kind: 'talos', version: 'v1.13.9' }, templateIds: ['9113'] }),
    );
    const md = renderUpgradePlan(p, 'md');
    expect(md).toContain('# Upgrade plan: Cluster lab/lab to Talos v1.13.9');
    expect(md).toContain('## Stage 1: Talos v1.12.11 → v1.13.9');
    expect(md).toContain('| lab-workers | 4 | 1 | 0 |');
    expect(md).toContain('templateID: 9113');
    const html = renderUpgradePlan(p, 'html');
    expect(html).toContain('<h2 id="stage-1">Stage 1: Talos v1.12.11 → v1.13.9');
    expect(html).not.toMatch(/<script|https?:\/\/(?!factory)/);
    const blocked = buildUpgradePlan(input({ target: { kind: 'talos', version: 'v1.13.9' } }));
    const json = JSON.parse(renderUpgradePlan(blocked, 'json'));
    expect(json.blockers[0]).toMatchObject({
      kind: 'template-id-missing',
      exit: 1,
      title: 'no template id for the new Talos image',
    });
  });
});
