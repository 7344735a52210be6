/**
 * The issue-12 benchmark lab as a snapshot files directory (bench/workers --generate N): the
 * control planes, PKI, etcd and kubeadm parts of examples/lab-cluster, and N generated workers in
 * four pools with the workloads a worker roll has to respect:
 * - Deployments with mixed PodDisruptionBudgets (maxUnavailable 1, minAvailable N−1, percentages)
 *   and some without one, pinned to their pool by a nodeSelector;
 * - a pool ("batch") whose requests leave room for one drained node at a time, not two;
 * - a tainted pool ("edge") whose workloads tolerate the taint;
 * - one StatefulSet whose pods sit on node-local PersistentVolumes (node-affine: unmovable).
 * kube-system stays as the example has it (DaemonSet pods regenerated on every worker).
 * Deterministic for a given size; not shipped (testing-*.ts): the bench and its tests use it.
 */
import { cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { usageError } from '../errors.js';
import { loadSnapshot } from '../snapshot/load.js';
import type { KubeObject, ResourceKey, Snapshot } from '../snapshot/model.js';
import { writeDirAtomic } from '../util/atomic-write.js';
import { cpuMillis, parseQuantity } from '../util/quantity.js';

export const POOL_LABEL = 'lab.example/pool';
export const EDGE_TAINT = { key: 'lab.example/edge', value: 'true', effect: 'NoSchedule' } as const;
/** Fewer workers leave a pool too small to drain one of its nodes into the others. */
export const MIN_WORKERS = 9;

export type Pool = 'general' | 'data' | 'batch' | 'edge';

export interface WorkerLab {
  resources: Partial<Record<ResourceKey, KubeObject[]>>;
  pools: Record<Pool, string[]>;
  /** Pods of generated workloads (not kube-system), and their PDBs by rule. */
  workloadPods: number;
  pdbRules: string[];
  /** "ns/name" of the StatefulSet pods on node-local volumes. */
  localVolumePods: string[];
}

const ALLOCATABLE = { cpu: 7500, memoryKi: 14_493_868, pods: 150 };
const MiB = 1024;

/** Which pool each worker (1-based) is in: edge ~10 %, batch ~15 %, data ~25 %, general the rest. */
export function poolSizes(workers: number): Record<Pool, number> {
  if (!Number.isInteger(workers) || workers < MIN_WORKERS)
    throw usageError(
      `--generate ${workers}: the lab needs at least ${MIN_WORKERS} workers`,
      `give --generate ${MIN_WORKERS} or more (every pool keeps room for one drained node)`,
    );
  const edge = Math.max(2, Math.round(workers * 0.1));
  const batch = Math.max(2, Math.round(workers * 0.15));
  const data = Math.max(3, Math.round(workers * 0.25));
  return { general: workers - edge - batch - data, data, batch, edge };
}

function uid(kind: string, n: number): string {
  const h = (x: number) => (x >>> 0).toString(16).padStart(8, '0');
  const k = [...kind].reduce((a, c) => Math.imul(a, 31) + c.charCodeAt(0), 7);
  const a = h(Math.imul(n + 1, 2654435761) ^ k);
  const b = h(Math.imul(n + 7, 40503) + k);
  return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-8${a.slice(1, 4)}-${b}${a.slice(0, 4)}`;
}

const isOn = (p: KubeObject, nodes: ReadonlySet<string>) => nodes.has(p.spec?.nodeName);
const ownerKind = (o: KubeObject) => o.metadata.ownerReferences?.find((r) => r.controller)?.kind;

interface AppSpec {
  ns: string;
  name: string;
  pool: Pool;
  replicas: number;
  cpu: number;
  memoryMi: number;
  /** Its PodDisruptionBudget's rule, or null for none. */
  pdb: { minAvailable: number | string } | { maxUnavailable: number | string } | null;
}

/** Workloads per pool, scaled with its size (about 7 pods per worker overall). */
function apps(sizes: Record<Pool, number>): AppSpec[] {
  const out: AppSpec[] = [];
  const rules = (i: number, replicas: number): AppSpec['pdb'] =>
    [
      { maxUnavailable: 1 },
      { minAvailable: replicas - 1 },
      { maxUnavailable: '25%' },
      { minAvailable: '50%' },
      null,
    ][i % 5]!;
  // general: many small web apps, 3–6 replicas.
  for (let i = 0; i < sizes.general * 2; i++) {
    const replicas = 3 + (i % 4);
    out.push({
      ns: `web-${i % 4}`,
      name: `web-${i}`,
      pool: 'general',
      replicas,
      cpu: 100 + (i % 3) * 100,
      memoryMi: 256,
      pdb: rules(i, replicas),
    });
  }
  // data: a few services beside the StatefulSet.
  for (let i = 0; i < sizes.data; i++) {
    const replicas = 3 + (i % 2);
    out.push({
      ns: 'data',
      name: `cache-${i}`,
      pool: 'data',
      replicas,
      cpu: 250,
      memoryMi: 1024,
      pdb: rules(i + 1, replicas),
    });
  }
  // edge: tolerating the pool's taint.
  for (let i = 0; i < sizes.edge; i++)
    out.push({
      ns: 'edge',
      name: `ingress-${i}`,
      pool: 'edge',
      replicas: 2,
      cpu: 200,
      memoryMi: 256,
      pdb: { maxUnavailable: 1 },
    });
  return out;
}

/**
 * The batch pool's workers filled to (n − 1.5)/n of their cpu with 500m pods: one drained node's
 * pods fit on the others, two nodes' do not (for n ≥ 3), so its batches are capacity-bound.
 */
function batchApps(n: number): AppSpec[] {
  const perNode = Math.floor((ALLOCATABLE.cpu * (n - 1.5)) / n / 500);
  const total = perNode * n;
  const out: AppSpec[] = [];
  for (let i = 0, left = total; left > 0; i++) {
    const replicas = Math.min(left, 6);
    left -= replicas;
    out.push({
      ns: 'batch',
      name: `worker-pool-${i}`,
      pool: 'batch',
      replicas,
      cpu: 500,
      memoryMi: 512,
      pdb: i % 2 ? { maxUnavailable: '34%' } : null,
    });
  }
  return out;
}

export function workerLab(example: Snapshot['resources'], workers: number): WorkerLab {
  const sizes = poolSizes(workers);
  const names = Array.from({ length: workers }, (_, i) => `worker-${i + 1}`);
  const pools = {} as Record<Pool, string[]>;
  let next = 0;
  for (const p of ['general', 'data', 'batch', 'edge'] as const) {
    pools[p] = names.slice(next, next + sizes[p]);
    next += sizes[p];
  }
  const poolOf = new Map(Object.entries(pools).flatMap(([p, ns]) => ns.map((n) => [n, p as Pool] as const)));

  const cps = example.nodes.filter(
    (n) => n.metadata.labels?.['node-role.kubernetes.io/control-plane'] !== undefined,
  );
  const cpNames = new Set(cps.map((n) => n.metadata.name));
  const exampleWorkers = example.nodes.filter((n) => !cpNames.has(n.metadata.name));
  const template = exampleWorkers[0];
  if (!template) throw new Error('the example snapshot has no worker Node to shape the generated ones on');
  // Example worker k → generated worker ((k − 1) mod N) + 1, for kube-system pods that ran there.
  const mapped = new Map(exampleWorkers.map((n, k) => [n.metadata.name, names[k % workers]!]));

  const nodes = names.map((name, i): KubeObject => {
    const n = structuredClone(template);
    n.metadata = {
      ...n.metadata,
      name,
      uid: uid('Node', i),
      labels: { ...n.metadata.labels, 'kubernetes.io/hostname': name, [POOL_LABEL]: poolOf.get(name)! },
    };
    n.spec = {
      podCIDR: `10.245.${i}.0/24`,
      podCIDRs: [`10.245.${i}.0/24`],
      ...(poolOf.get(name) === 'edge' && { taints: [{ ...EDGE_TAINT }] }),
    };
    n.status = {
      ...n.status,
      addresses: [
        { type: 'InternalIP', address: `10.20.1.${i + 1}` },
        { type: 'Hostname', address: name },
      ],
    };
    return n;
  });

  // kube-system as the example has it; DaemonSet pods on every generated worker.
  const system = (o: KubeObject) => o.metadata.namespace === 'kube-system';
  const keptPods = example.pods.filter(
    (p) => system(p) && (isOn(p, cpNames) || ownerKind(p) !== 'DaemonSet'),
  );
  const pods: KubeObject[] = keptPods.map((p) =>
    isOn(p, cpNames) ? p : { ...p, spec: { ...p.spec, nodeName: mapped.get(p.spec?.nodeName) ?? names[0] } },
  );
  const dsTemplates = new Map<string, KubeObject>();
  for (const p of example.pods)
    if (ownerKind(p) === 'DaemonSet' && !isOn(p, cpNames))
      dsTemplates.set(p.metadata.ownerReferences![0]!.name, p);
  let podN = 0;
  for (const [ds, t] of dsTemplates)
    names.forEach((name, i) => {
      const p = structuredClone(t);
      p.metadata = { ...p.metadata, name: `${ds}-w${i + 1}`, uid: uid('Pod', podN++) };
      p.spec = { ...p.spec, nodeName: name };
      pods.push(p);
    });

  // Placement like a scheduler's: each replica on the least-loaded worker of its pool that has room.
  const used = new Map(names.map((n) => [n, { cpu: 0, mem: 0, pods: 0 }]));
  for (const p of pods) {
    const u = used.get(p.spec?.nodeName);
    if (!u) continue;
    u.pods++;
    for (const c of p.spec?.containers ?? []) {
      u.cpu += cpuMillis(c.resources?.requests?.cpu) ?? 0;
      u.mem += (parseQuantity(c.resources?.requests?.memory) ?? 0) / 1024;
    }
  }
  const place = (pool: Pool, cpu: number, memKi: number, avoid: Set<string>): string => {
    const fits = pools[pool].filter((n) => {
      const u = used.get(n)!;
      return (
        u.cpu + cpu <= ALLOCATABLE.cpu && u.mem + memKi <= ALLOCATABLE.memoryKi && u.pods < ALLOCATABLE.pods
      );
    });
    const pick = [...fits].sort(
      (a, b) =>
        Number(avoid.has(a)) - Number(avoid.has(b)) ||
        used.get(a)!.cpu - used.get(b)!.cpu ||
        a.localeCompare(b),
    )[0];
    if (!pick) throw new Error(`generator: pool ${pool} has no room for a ${cpu}m pod`);
    const u = used.get(pick)!;
    u.cpu += cpu;
    u.mem += memKi;
    u.pods++;
    return pick;
  };

  const deployments = example.deployments.filter(system);
  const replicasets = example.replicasets.filter(system);
  const statefulsets: KubeObject[] = [];
  const pdbs: KubeObject[] = [];
  const pvs: KubeObject[] = [];
  const nsNames = new Set<string>();
  const pdbRules: string[] = [];
  let workloadPods = 0;
  const container = (a: { name: string; cpu: number; memoryMi: number }) => ({
    name: a.name,
    image: `registry.lab.example/bench/${a.name.replace(/-\d+$/, '')}:1.0.0`,
    resources: { requests: { cpu: `${a.cpu}m`, memory: `${a.memoryMi}Mi` } },
  });
  const podSpec = (a: AppSpec) => ({
    containers: [container(a)],
    nodeSelector: { [POOL_LABEL]: a.pool },
    ...(a.pool === 'edge' && {
      tolerations: [{ key: EDGE_TAINT.key, operator: 'Exists', effect: EDGE_TAINT.effect }],
    }),
    terminationGracePeriodSeconds: 5,
  });
  const ready = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  const addPdb = (a: AppSpec, n: number) => {
    if (!a.pdb) return;
    const rule = Object.entries(a.pdb)[0]!;
    pdbRules.push(`${rule[0]} ${rule[1]}`);
    pdbs.push({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: a.name, namespace: a.ns, uid: uid('PodDisruptionBudget', n) },
      spec: { ...a.pdb, selector: { matchLabels: { app: a.name } } },
    });
  };

  [...apps(sizes), ...batchApps(sizes.batch)].forEach((a, n) => {
    nsNames.add(a.ns);
    const hash = uid('hash', n)
      .slice(0, 10)
      .replace(/[^a-z0-9]/g, 'x');
    const dUid = uid('Deployment', n);
    const rsUid = uid('ReplicaSet', n);
    const labels = { app: a.name };
    deployments.push({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: a.name, namespace: a.ns, uid: dUid, labels },
      spec: {
        replicas: a.replicas,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: podSpec(a) },
      },
      status: { replicas: a.replicas, readyReplicas: a.replicas, availableReplicas: a.replicas },
    });
    replicasets.push({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${a.name}-${hash}`,
        namespace: a.ns,
        uid: rsUid,
        labels: { ...labels, 'pod-template-hash': hash },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: a.name, uid: dUid, controller: true },
        ],
      },
      spec: { replicas: a.replicas, selector: { matchLabels: { ...labels, 'pod-template-hash': hash } } },
    });
    addPdb(a, n);
    const avoid = new Set<string>();
    for (let r = 0; r < a.replicas; r++) {
      const node = place(a.pool, a.cpu, a.memoryMi * MiB, avoid);
      avoid.add(node);
      workloadPods++;
      pods.push({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${a.name}-${hash}-${r}`,
          namespace: a.ns,
          uid: uid('Pod', podN++),
          labels: { ...labels, 'pod-template-hash': hash },
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'ReplicaSet',
              name: `${a.name}-${hash}`,
              uid: rsUid,
              controller: true,
            },
          ],
        },
        spec: { ...podSpec(a), nodeName: node },
        status: ready,
      });
    }
  });

  // The StatefulSet on node-local volumes: one pod per data worker (up to 3), each volume bound to its node.
  const store: AppSpec = {
    ns: 'data',
    name: 'store',
    pool: 'data',
    replicas: Math.min(3, sizes.data),
    cpu: 500,
    memoryMi: 2048,
    pdb: { maxUnavailable: 1 },
  };
  const stsUid = uid('StatefulSet', 0);
  const labels = { app: store.name };
  statefulsets.push({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: store.name, namespace: store.ns, uid: stsUid, labels },
    spec: {
      replicas: store.replicas,
      serviceName: store.name,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: podSpec(store) },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName: 'local-disk',
            resources: { requests: { storage: '50Gi' } },
          },
        },
      ],
    },
    status: { replicas: store.replicas, readyReplicas: store.replicas },
  });
  addPdb(store, 10_000);
  const localVolumePods: string[] = [];
  for (let r = 0; r < store.replicas; r++) {
    const node = pools.data[r]!;
    const u = used.get(node)!;
    u.cpu += store.cpu;
    u.pods++;
    const claim = `data-${store.name}-${r}`;
    pvs.push({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `local-${node}-store`, uid: uid('PersistentVolume', r) },
      spec: {
        capacity: { storage: '50Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: 'local-disk',
        local: { path: '/mnt/disks/store' },
        claimRef: { kind: 'PersistentVolumeClaim', namespace: store.ns, name: claim },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
            ],
          },
        },
      },
      status: { phase: 'Bound' },
    });
    pods.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${store.name}-${r}`,
        namespace: store.ns,
        uid: uid('Pod', podN++),
        labels,
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'StatefulSet', name: store.name, uid: stsUid, controller: true },
        ],
      },
      spec: {
        ...podSpec(store),
        nodeName: node,
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
      },
      status: ready,
    });
    workloadPods++;
    localVolumePods.push(`${store.ns}/${store.name}-${r}`);
  }

  const storageclasses = [
    ...example.storageclasses,
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'local-disk', uid: uid('StorageClass', 0) },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'WaitForFirstConsumer',
    },
  ];
  const namespaces = [
    ...example.namespaces,
    ...[...nsNames]
      .filter((n) => !example.namespaces.some((e) => e.metadata.name === n))
      .map(
        (name, i): KubeObject => ({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name, uid: uid('Namespace', i) },
        }),
      ),
  ];
  return {
    resources: {
      namespaces,
      nodes: [...cps, ...nodes],
      pods,
      deployments,
      replicasets,
      statefulsets,
      poddisruptionbudgets: pdbs,
      services: example.services.filter((s) => system(s) || s.metadata.namespace === 'default'),
      csidrivers: example.csidrivers,
      storageclasses,
      persistentvolumes: pvs,
    },
    pools,
    workloadPods,
    pdbRules,
    localVolumePods,
  };
}

/** Example files replaced by the generated resources (the rest is copied: PKI, manifests, etcd, kubeadm). */
const REPLACED =
  /^(nodes|pods|deployments|replicasets|statefulsets|pdbs|services|namespaces|storage|endpointslices|batch)\.(ya?ml|json)$/;

/** Writes the lab as a files directory at `dir` (atomically: whole or not at all). */
export async function writeWorkerLab(
  exampleDir: string,
  dir: string,
  workers: number,
  opts: { force?: boolean } = {},
): Promise<WorkerLab> {
  const example = await loadSnapshot(exampleDir, { strictPki: false });
  const lab = workerLab(example.resources, workers);
  await writeDirAtomic(
    dir,
    async (tmp) => {
      await cp(exampleDir, tmp, {
        recursive: true,
        force: true,
        filter: (src) => !src.endsWith('README.md'),
      });
      const res = join(tmp, 'resources');
      await mkdir(res, { recursive: true });
      for (const f of await readdir(res)) if (REPLACED.test(f)) await rm(join(res, f));
      for (const [key, items] of Object.entries(lab.resources))
        await writeFile(
          join(res, `${key}.json`),
          `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 1)}\n`,
          {
            mode: 0o600,
          },
        );
    },
    { ...(opts.force !== undefined && { force: opts.force }), origin: { flag: '--generate' } },
  );
  return lab;
}
