/**
 * capi.move-paused-or-unstable and capi.operator-inventory on the management cluster as ferry
 * hands it over, bent one field at a time (the fixture cases are in capi.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject, MgmtSnapshot } from '../../snapshot/model.js';
import { adopted, findings, handedOver, run, withMgmt } from './testing-capi.js';

const moveFindings = (m: MgmtSnapshot) =>
  findings(run('capi.move-paused-or-unstable', withMgmt(m))).map((f) => f.message);
const find = (m: MgmtSnapshot, kind: string) => m.objects.find((o) => o.kind === kind)!;

function machine(name: string, bend: (x: KubeObject) => void): KubeObject {
  const x: KubeObject = {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name, namespace: 'lab', labels: { 'cluster.x-k8s.io/cluster-name': 'lab' } },
    spec: { clusterName: 'lab' },
    status: { phase: 'Running', nodeRef: { name } },
  };
  bend(x);
  return x;
}

describe('capi.move-paused-or-unstable', () => {
  it('a handed-over cluster with Running Machines is steady, in the v1beta1 status shape too', () => {
    const m = handedOver();
    m.objects.push(machine('lab-workers-abc12-x7k2p', () => {}));
    expect(moveFindings(m)).toEqual([]);
    find(m, 'Cluster').status = {
      infrastructureReady: true,
      controlPlaneReady: true,
      conditions: [{ type: 'Ready', status: 'True' }],
    };
    expect(moveFindings(m)).toEqual([]);
  });

  it('mid-adoption the paused TalosControlPlane is named as a migration in flight', () => {
    const m = adopted();
    find(m, 'Cluster').status = handedOver().objects.find((o) => o.kind === 'Cluster')!.status;
    const [f, ...rest] = findings(run('capi.move-paused-or-unstable', withMgmt(m)));
    expect(rest).toEqual([]);
    expect(f!.message).toMatch(
      /^TalosControlPlane lab\/lab-control-plane carries the cluster\.x-k8s\.io\/paused annotation: cluster lab\/lab is mid-migration/,
    );
    expect(f!.evidence[0]).toMatchObject({ object: { kind: 'TalosControlPlane' } });
  });

  it('a paused Cluster is refused by clusterctl move, and says so on spec.paused', () => {
    const m = handedOver();
    find(m, 'Cluster').spec.paused = true;
    const [f] = findings(run('capi.move-paused-or-unstable', withMgmt(m)));
    expect(f!.message).toMatch(/^Cluster lab\/lab is paused: clusterctl move refuses to move it/);
    expect(f!.evidence[0]).toMatchObject({ field: 'spec.paused', observed: 'true' });
  });

  it('a Machine being deleted, one without a Node, and rollouts in flight are each named', () => {
    const m = handedOver();
    m.objects.push(
      machine('lab-workers-abc12-gone1', (x) => {
        x.metadata.deletionTimestamp = '2026-12-01T00:00:00Z';
        x.status.phase = 'Deleting';
      }),
      machine('lab-workers-abc12-new01', (x) => {
        x.status = { phase: 'Provisioning' };
      }),
    );
    find(m, 'TalosControlPlane').status = {
      replicas: 0,
      conditions: [{ type: 'Resized', status: 'False', reason: 'ScalingUp' }],
    };
    const md = find(m, 'MachineDeployment');
    md.spec.replicas = 2;
    md.status = { replicas: 2, upToDateReplicas: 1 };
    expect(moveFindings(m)).toEqual([
      expect.stringMatching(
        /^Machine lab-workers-abc12-gone1 .*: it is being deleted \(since 2026-12-01T00:00:00Z\); its phase is Deleting, not Running\./,
      ),
      expect.stringMatching(
        /^Machine lab-workers-abc12-new01 .*: its phase is Provisioning, not Running; it has no nodeRef\./,
      ),
      expect.stringMatching(/^TalosControlPlane lab-control-plane is mid-roll: condition Resized is False\./),
      expect.stringMatching(/^MachineDeployment lab-workers is mid-roll: only 1 of 2 are up to date\./),
    ]);
  });
});

describe('capi.move-paused-or-unstable counts control-plane Machines', () => {
  it("a TalosControlPlane's stale status count (nothing updates it while paused) is not a roll; missing Machines are", () => {
    const m = handedOver();
    const tcp = find(m, 'TalosControlPlane');
    tcp.spec!['replicas'] = 1;
    tcp.status = { replicas: 0 };
    const cp = machine('lab-control-plane-ab12c', (x) => {
      x.metadata.labels!['cluster.x-k8s.io/control-plane'] = '';
    });
    m.objects.push(cp);
    expect(moveFindings(m).filter((f) => /mid-roll/.test(f))).toEqual([]);
    tcp.spec!['replicas'] = 2;
    expect(moveFindings(m)).toContainEqual(
      expect.stringMatching(/^TalosControlPlane lab-control-plane is mid-roll: 1 replicas exist, 2 wanted/),
    );
  });
});

describe('capi.operator-inventory', () => {
  const operatorProvider = (kind: string, name: string): KubeObject => ({
    apiVersion: 'operator.cluster.x-k8s.io/v1alpha2',
    kind,
    metadata: { name, namespace: `${name}-system` },
    spec: { version: 'v0.5.13' },
  });
  const inventory = (m: MgmtSnapshot) => findings(run('capi.operator-inventory', withMgmt(m)));

  it('clusterctl-installed providers (an inventory, no operator objects) are nothing to report', () => {
    expect(inventory(adopted())).toEqual([]);
  });

  it('an operator provider with a matching inventory entry passes; one without is named with its kind and version', () => {
    const m = adopted();
    m.objects.push(
      operatorProvider('ControlPlaneProvider', 'talos'),
      operatorProvider('BootstrapProvider', 'talos'),
    );
    const out = inventory(m);
    expect(out.map((f) => f.message)).toEqual([
      expect.stringMatching(
        /^BootstrapProvider talos v0\.5\.13 was installed by the CAPI Operator and has no clusterctl inventory entry/,
      ),
    ]);
    expect(out[0]!.remediation).toMatch(/clusterctl move --to-directory DIR/);
  });

  it('an object of the same kind outside the operator group is not an operator provider', () => {
    const m = adopted();
    m.objects.push({
      ...operatorProvider('InfrastructureProvider', 'proxmox'),
      apiVersion: 'example.com/v1',
    });
    expect(inventory(m)).toEqual([]);
  });
});
