import { describe, expect, it } from 'vitest';
import { buildIndex } from '../../audit/snapshot-index.js';
import { deriveFacts } from '../../facts/derive.js';
import type { Snapshot } from '../../snapshot/model.js';
import { exampleSnapshot } from '../../snapshot/testing-example.js';
import { clusterModel, podRequests } from './from-snapshot.js';

function modelOf(snap: Snapshot) {
  const facts = deriveFacts(snap, {});
  return clusterModel(snap, buildIndex(snap), facts.nodes.workers.value ?? []);
}

const GiB = 2 ** 30;

describe('the batch model of the example cluster', () => {
  it('takes the pods a drain evicts from the workers; DaemonSet pods stay and count as fixed requests', async () => {
    const m = modelOf(await exampleSnapshot());
    expect(m.workers.map((w) => w.name)).toEqual([
      'worker-1',
      'worker-2',
      'worker-3',
      'worker-4',
      'worker-5',
    ]);
    const names = m.pods.map((p) => `${p.node} ${p.namespace}/${p.name}`);
    expect(names.some((n) => n.includes('cilium-') && !n.includes('operator'))).toBe(false);
    expect(names.some((n) => n.includes('csi-cinder-nodeplugin'))).toBe(false);
    // The finished backup Job pod holds nothing.
    expect(names.some((n) => n.includes('db-backup'))).toBe(false);
    expect(names).toContain('worker-2 default/netshoot');
    expect(m.workers[0]!.allocatable).toEqual({ cpu: 7500, memory: 14493868 * 1024, pods: 150 });
    expect(m.workers[0]!.fixed.pods).toBe(2);
  });

  it('owners, budgets and volumes: a bare pod has none, postgres may only go where its zonal volume attaches', async () => {
    const m = modelOf(await exampleSnapshot());
    const pod = (name: string) => m.pods.find((p) => p.name.startsWith(name))!;
    expect(pod('netshoot').owner).toBeNull();
    expect(pod('checkout-').owner).toEqual({
      kind: 'Deployment',
      namespace: 'shop',
      name: 'checkout',
      replicas: 2,
    });
    expect(pod('postgres-0').owner).toMatchObject({ kind: 'StatefulSet', replicas: 3 });
    const pg = m.schedulings[pod('postgres-0').scheduling]!;
    expect(pg.nodeSelector).toEqual({ 'lab.example/pool': 'data' });
    expect(pg.required).toEqual([
      [[{ key: 'topology.cinder.csi.openstack.org/zone', operator: 'In', values: ['nova'] }]],
    ]);
    expect(pod('postgres-0').pin).toBeNull();
    expect(pod('postgres-0').requests).toEqual({ cpu: 500, memory: 2 * GiB, pods: 1 });
  });

  it('shop/checkout allows no disruption (its status); one more replica would allow one', async () => {
    const m = modelOf(await exampleSnapshot());
    const checkout = m.pdbs.find((b) => b.name === 'checkout')!;
    expect(checkout).toMatchObject({
      allowed: 0,
      source: 'status',
      allowedWithExtraReplica: 1,
      rule: 'minAvailable 2',
      workload: { kind: 'Deployment', name: 'checkout', replicas: 2 },
    });
    expect(m.pdbs.find((b) => b.name === 'frontend')).toMatchObject({ allowed: 1, rule: 'maxUnavailable 1' });
  });

  it("without a status, a budget's allowed disruptions come from its spec and the pods' readiness", async () => {
    const snap = await exampleSnapshot();
    const api = snap.resources.poddisruptionbudgets.find((b) => b.metadata.name === 'api')!;
    delete api.status;
    // minAvailable 2 of 3 api pods: one may go while all three are Ready...
    expect(modelOf(snap).pdbs.find((b) => b.name === 'api')).toMatchObject({ allowed: 1, source: 'spec' });
    // ...none once one of them is not Ready.
    const notReady = snap.resources.pods.find((p) => p.metadata.name.startsWith('api-'))!;
    notReady.status.conditions = [{ type: 'Ready', status: 'False' }];
    expect(modelOf(snap).pdbs.find((b) => b.name === 'api')).toMatchObject({
      allowed: 0,
      allowedWithExtraReplica: 1,
    });
    // A percentage rounds up, as the disruption controller does: maxUnavailable 50% of 3 allows 2.
    api.spec = { ...api.spec, minAvailable: undefined, maxUnavailable: '50%' };
    delete api.spec.minAvailable;
    notReady.status.conditions = [{ type: 'Ready', status: 'True' }];
    expect(modelOf(snap).pdbs.find((b) => b.name === 'api')).toMatchObject({ allowed: 2 });
  });

  it('a pod on a node-local volume, or pinned to its node by name, is pinned', async () => {
    const snap = await exampleSnapshot();
    const pv = snap.resources.persistentvolumes.find((v) => v.spec?.claimRef?.name === 'data-postgres-1')!;
    pv.spec.local = { path: '/mnt/disks/pg' };
    const wiki = snap.resources.pods.find(
      (p) => p.metadata.name.startsWith('frontend-') && p.spec.nodeName === 'worker-2',
    )!;
    wiki.spec.nodeSelector = { 'kubernetes.io/hostname': 'worker-2' };
    const m = modelOf(snap);
    expect(m.pods.find((p) => p.name === 'postgres-1')!.pin).toEqual({
      kind: 'local-volume',
      volume: pv.metadata.name,
    });
    expect(m.pods.find((p) => p.name === wiki.metadata.name)!.pin).toEqual({
      kind: 'node-name',
      field: 'spec.nodeSelector["kubernetes.io/hostname"]',
    });
  });

  it('required node affinity naming the node (hostname In, matchFields metadata.name) pins like the hostname selector; NotIn does not', async () => {
    const snap = await exampleSnapshot();
    const free = modelOf(snap).pods.filter((p) => p.pin === null);
    const [a, b, c] = free
      .slice(0, 3)
      .map((f) => snap.resources.pods.find((p) => p.metadata.name === f.name));
    const required = (term: unknown) => ({
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] } },
    });
    a!.spec.affinity = required({
      matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [a!.spec.nodeName] }],
    });
    b!.spec.affinity = required({
      matchFields: [{ key: 'metadata.name', operator: 'In', values: [b!.spec.nodeName] }],
    });
    c!.spec.affinity = required({
      matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values: ['worker-9'] }],
    });
    const m = modelOf(snap);
    const pin = (name: string) => m.pods.find((p) => p.name === name)!.pin;
    const field = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution';
    expect(pin(a!.metadata.name)).toEqual({ kind: 'node-name', field });
    expect(pin(b!.metadata.name)).toEqual({ kind: 'node-name', field });
    expect(pin(c!.metadata.name)).toBeNull();
  });
});

describe('podRequests', () => {
  it('sums the containers, takes the largest init container when bigger, adds the overhead', () => {
    expect(
      podRequests({
        containers: [
          { resources: { requests: { cpu: '250m', memory: '64Mi' } } },
          { resources: { requests: { cpu: '1' } } },
        ],
        initContainers: [{ resources: { requests: { cpu: '100m', memory: '1Gi' } } }],
        overhead: { cpu: '10m' },
      }),
    ).toEqual({ cpu: 1260, memory: GiB, pods: 1 });
    expect(podRequests({ containers: [{}] })).toEqual({ cpu: 0, memory: 0, pods: 1 });
  });
});
