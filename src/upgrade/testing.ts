/**
 * Test support: a management cluster holding one adopted, running lab Cluster (the lab kit's
 * objects, unpaused, with Machines that have Nodes) and a workload snapshot of those Nodes with
 * one Deployment behind a PodDisruptionBudget.
 */
import { labKitObjects } from '../capi/testing-kit.js';
import { emptySnapshot, node } from '../facts/testing-builders.js';
import { mgmtSnapshot } from '../snapshot/mgmt.js';
import type { KubeObject, MgmtSnapshot, Snapshot } from '../snapshot/model.js';

export interface LabMgmtOptions {
  kubernetes?: string;
  cpReplicas?: number;
  workers?: string[];
  /** Per Machine name: its spec.version, when it differs. */
  machineVersions?: Record<string, string>;
  pauseControlPlane?: boolean;
  pauseCluster?: boolean;
}

export const CP_NODES = ['lab-control-plane-a', 'lab-control-plane-b', 'lab-control-plane-c'];
export const WORKER_NODES = ['lab-workers-a', 'lab-workers-b', 'lab-workers-c', 'lab-workers-d'];

function machine(ns: string, name: string, version: string, labels: Record<string, string>): KubeObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name, namespace: ns, labels: { 'cluster.x-k8s.io/cluster-name': 'lab', ...labels } },
    spec: { clusterName: 'lab', version, bootstrap: { dataSecretName: `${name}-bootstrap` } },
    status: { phase: 'Running', nodeRef: { name } },
  };
}

/** The lab kit's objects as a running, adopted cluster: every object unpaused, replicas set, Machines with Nodes. */
export function labMgmtObjects(o: LabMgmtOptions = {}, ns = 'lab'): KubeObject[] {
  const k8s = o.kubernetes ?? 'v1.32.4';
  const cps = CP_NODES.slice(0, o.cpReplicas ?? 3);
  const workers = o.workers ?? WORKER_NODES;
  const objs = labKitObjects(ns).map((x) => {
    const c = structuredClone(x);
    if (c.metadata.annotations) delete c.metadata.annotations['cluster.x-k8s.io/paused'];
    if (c.kind === 'TalosControlPlane') {
      c.spec.replicas = cps.length;
      c.spec.version = k8s;
      if (o.pauseControlPlane)
        c.metadata.annotations = { ...c.metadata.annotations, 'cluster.x-k8s.io/paused': 'true' };
    }
    if (c.kind === 'MachineDeployment') {
      c.spec.replicas = workers.length;
      c.spec.template.spec.version = k8s;
    }
    if (c.kind === 'Cluster' && o.pauseCluster) c.spec.paused = true;
    return c;
  });
  const version = (n: string) => o.machineVersions?.[n] ?? k8s;
  return [
    ...objs,
    ...cps.map((n) => machine(ns, n, version(n), { 'cluster.x-k8s.io/control-plane': '' })),
    ...workers.map((n) => machine(ns, n, version(n), { 'cluster.x-k8s.io/deployment-name': 'lab-workers' })),
  ];
}

export function labMgmt(o: LabMgmtOptions = {}): MgmtSnapshot {
  return mgmtSnapshot(labMgmtObjects(o), { kind: 'api', server: 'https://mgmt.test', path: '/apis' });
}

export interface WorkloadOptions {
  talos?: string;
  kubelet?: string;
  /** The budget over the web Deployment: minAvailable (default 3 of 4 replicas: one disruption). */
  minAvailable?: number;
  /** Extra objects (e.g. one through a removed API). */
  extra?: KubeObject[];
  /** Worker Nodes (default WORKER_NODES); the Deployment runs one replica on each. */
  workers?: string[];
}

/** The workload cluster: Talos Nodes, a Deployment of one replica per worker spread over the workers, its budget. */
export function labWorkload(o: WorkloadOptions = {}): Snapshot {
  const s = emptySnapshot();
  const talos = o.talos ?? 'v1.12.11';
  const workers = o.workers ?? WORKER_NODES;
  const n = workers.length;
  const nodes = [
    ...CP_NODES.map((n, i) =>
      node(n, { ip: `10.20.0.${10 + i}`, controlPlane: true, kubeletVersion: o.kubelet ?? 'v1.32.4' }),
    ),
    ...workers.map((w, i) => node(w, { ip: `10.20.0.${20 + i}`, kubeletVersion: o.kubelet ?? 'v1.32.4' })),
  ];
  for (const n of nodes) {
    n.status.nodeInfo.osImage = `Talos (${talos})`;
    n.status.allocatable = { cpu: '4', memory: '8Gi', pods: '110' };
  }
  s.resources.nodes = nodes;
  const labels = { app: 'web' };
  s.resources.deployments = [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', uid: 'd1' },
      spec: { replicas: n, selector: { matchLabels: labels } },
    },
  ];
  s.resources.replicasets = [
    {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: 'web-1',
        namespace: 'shop',
        uid: 'r1',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd1', controller: true },
        ],
      },
      spec: { replicas: n },
    },
  ];
  s.resources.pods = workers.map((w, i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-1-${i}`,
      namespace: 'shop',
      labels,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'r1', controller: true },
      ],
    },
    spec: {
      nodeName: w,
      containers: [{ name: 'web', resources: { requests: { cpu: '100m', memory: '128Mi' } } }],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  }));
  const minAvailable = o.minAvailable ?? n - 1;
  s.resources.poddisruptionbudgets = [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { minAvailable, selector: { matchLabels: labels } },
      status: {
        disruptionsAllowed: Math.max(0, n - minAvailable),
        currentHealthy: n,
        desiredHealthy: minAvailable,
        expectedPods: n,
      },
    },
  ];
  for (const x of o.extra ?? []) {
    const key = `${x.kind.toLowerCase()}s` as keyof typeof s.resources;
    if (key in s.resources) (s.resources[key] as KubeObject[]).push(x);
  }
  return s;
}
