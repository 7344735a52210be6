import { beforeEach, describe, expect, it } from 'vitest';
import { isClusterApiGroup, type Selection, selectGraph } from './graph.js';
import type { KubeObject } from './model.js';

let n = 0;
const obj = (
  kind: string,
  name: string,
  extra: Partial<KubeObject['metadata']> = {},
  apiVersion = 'cluster.x-k8s.io/v1beta2',
): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace: 'ns', uid: `uid-${++n}`, ...extra },
});
const own = (o: KubeObject) => ({
  ownerReferences: [{ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid! }],
});
const secret = (name: string, extra: Partial<KubeObject['metadata']> = {}) =>
  obj('Secret', name, extra, 'v1');

describe('selectGraph', () => {
  const cluster = obj('Cluster', 'c1');
  const md = obj('MachineDeployment', 'c1-md', own(cluster));
  const ms = obj('MachineSet', 'c1-ms', own(md));
  const m = obj('Machine', 'c1-m', own(ms));
  const unowned = obj('Machine', 'stray', { labels: { 'cluster.x-k8s.io/cluster-name': 'c1' } });
  const orphan = obj('Machine', 'gone', { labels: { 'cluster.x-k8s.io/cluster-name': 'c0' } });
  const cls = obj('ClusterClass', 'gold');
  const topo: KubeObject = { ...obj('Cluster', 'c2'), spec: { topology: { classRef: { name: 'gold' } } } };
  const other = obj('ProxmoxMachineTemplate', 'free', {}, 'infrastructure.cluster.x-k8s.io/v1alpha2');
  const labelled = obj(
    'ProxmoxMachineTemplate',
    'kept',
    { labels: { 'clusterctl.cluster.x-k8s.io/move': '' } },
    'infrastructure.cluster.x-k8s.io/v1alpha2',
  );
  const secrets = [
    secret('c1-kubeconfig', own(cluster)),
    secret('c1-ca'),
    secret('c1-talos'),
    secret('c1-something'),
    secret('c1-creds', own(labelled)),
    { ...secret('c1-etcd'), metadata: { ...secret('c1-etcd').metadata, namespace: 'elsewhere' } },
  ];
  // Selected inside each test, not at collection: what runs outside a test escapes the mutation run.
  let r: Selection;
  let reasons: Record<string, string>;
  beforeEach(() => {
    r = selectGraph({
      custom: [cluster, md, ms, m, unowned, orphan, cls, topo, other, labelled],
      secrets,
      configMaps: [],
    });
    reasons = Object.fromEntries(
      r.selected.map((s) => [
        `${s.object.kind} ${s.object.metadata.namespace}/${s.object.metadata.name}`,
        s.reason,
      ]),
    );
  });

  it('follows ownerRef chains from each Cluster to any depth', () => {
    expect(reasons['Machine ns/c1-m']).toBe('owner-chain');
    expect(reasons['MachineSet ns/c1-ms']).toBe('owner-chain');
  });

  it('carries soft-owned Secrets by name suffix, the unowned <cluster>-talos (H14), and moved labels', () => {
    expect(reasons['Secret ns/c1-ca']).toBe('soft-owned-secret');
    expect(reasons['Secret ns/c1-talos']).toBe('talos-secret');
    expect(reasons['Secret ns/c1-kubeconfig']).toBe('soft-owned-secret');
    expect(reasons['ProxmoxMachineTemplate ns/kept']).toBe('move-label');
    expect(reasons['Secret ns/c1-creds']).toBe('owner-chain');
  });

  it('carries what the cluster-name label of a Cluster in its namespace names, owned or not', () => {
    expect(reasons['Machine ns/stray']).toBe('cluster-label');
  });

  it('leaves out what nothing reaches, a suffix move does not know, and other namespaces, and says so for CAPI objects', () => {
    expect(reasons['Secret ns/c1-something']).toBeUndefined();
    expect(reasons['Secret elsewhere/c1-etcd']).toBeUndefined();
    expect(reasons['ProxmoxMachineTemplate ns/free']).toBeUndefined();
    expect(reasons['Machine ns/gone']).toBeUndefined();
    expect(r.leftBehind).toEqual([
      'Machine ns/gone (labelled for cluster c0, which namespace ns does not hold, and no owner or reference leads to it)',
      'ProxmoxMachineTemplate ns/free',
    ]);
  });

  it('carries ClusterClasses as roots', () => {
    expect(reasons['ClusterClass ns/gold']).toBe('root');
    expect(reasons['Cluster ns/c2']).toBe('root');
  });
});

/** A management cluster right after `ferry capi adopt`, or with the controllers down: no owner references. */
describe('selectGraph without owner references', () => {
  const infra = 'infrastructure.cluster.x-k8s.io/v1alpha2';
  const spec = (o: KubeObject, s: unknown): KubeObject => ({ ...o, spec: s });
  const cluster = spec(obj('Cluster', 'lab'), {
    controlPlaneRef: { apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'TalosControlPlane', name: 'lab-cp' },
    infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'ProxmoxCluster', name: 'lab' },
  });
  const tcp = spec(obj('TalosControlPlane', 'lab-cp', {}, 'controlplane.cluster.x-k8s.io/v1alpha3'), {
    infrastructureTemplate: {
      apiVersion: infra,
      kind: 'ProxmoxMachineTemplate',
      name: 'lab-cp',
      namespace: 'ns',
    },
  });
  const pc = obj('ProxmoxCluster', 'lab', {}, infra);
  const creds = secret('lab-proxmox-credentials', own(pc));
  const pmtCp = obj('ProxmoxMachineTemplate', 'lab-cp', {}, infra);
  const pmtW = obj('ProxmoxMachineTemplate', 'lab-worker', {}, infra);
  const tct = obj('TalosConfigTemplate', 'lab-workers', {}, 'bootstrap.cluster.x-k8s.io/v1alpha3');
  const template = {
    spec: {
      bootstrap: {
        configRef: {
          apiGroup: 'bootstrap.cluster.x-k8s.io',
          kind: 'TalosConfigTemplate',
          name: 'lab-workers',
        },
      },
      infrastructureRef: {
        apiGroup: 'infrastructure.cluster.x-k8s.io',
        kind: 'ProxmoxMachineTemplate',
        name: 'lab-worker',
      },
    },
  };
  const md = spec(
    obj('MachineDeployment', 'lab-workers', { labels: { 'cluster.x-k8s.io/cluster-name': 'lab' } }),
    {
      clusterName: 'lab',
      template,
    },
  );
  // Names the same as the references, but of another group, kind or namespace: never taken for them.
  const lookalikes = [
    obj('TalosControlPlane', 'lab-cp', {}, 'controlplane.example.com/v1'),
    obj('ProxmoxMachineTemplate', 'lab-cp', { namespace: 'other' }, infra),
    obj('ProxmoxCluster', 'lab-worker', {}, infra),
  ];
  let r: Selection;
  let reasons: Map<KubeObject, string>;
  beforeEach(() => {
    r = selectGraph({
      custom: [cluster, tcp, pc, pmtCp, pmtW, tct, md, ...lookalikes],
      secrets: [creds],
      configMaps: [],
    });
    reasons = new Map(r.selected.map((s) => [s.object, s.reason]));
  });

  it("follows the Cluster's controlPlaneRef and infrastructureRef and the TalosControlPlane's template", () => {
    expect(reasons.get(tcp)).toBe('reference');
    expect(reasons.get(pc)).toBe('reference');
    expect(reasons.get(pmtCp)).toBe('reference');
  });

  it("follows a labelled MachineDeployment's bootstrap and infrastructure templates", () => {
    expect(reasons.get(md)).toBe('cluster-label');
    expect(reasons.get(tct)).toBe('reference');
    expect(reasons.get(pmtW)).toBe('reference');
  });

  it('carries what an object reached by a reference owns', () => {
    expect(reasons.get(creds)).toBe('owner-chain');
  });

  it('matches a reference by group, kind, namespace and name, and leaves the lookalikes behind', () => {
    for (const l of lookalikes) expect(reasons.get(l)).toBeUndefined();
    expect(r.leftBehind).toEqual([
      'TalosControlPlane ns/lab-cp',
      'ProxmoxMachineTemplate other/lab-cp',
      'ProxmoxCluster ns/lab-worker',
    ]);
  });

  it("follows a MachineSet's templates and v1beta1 references (apiVersion, no apiGroup)", () => {
    const c = spec(obj('Cluster', 'old', {}, 'cluster.x-k8s.io/v1beta1'), {
      controlPlaneRef: {
        apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3',
        kind: 'TalosControlPlane',
        name: 'old-cp',
      },
    });
    const cp = obj('TalosControlPlane', 'old-cp', {}, 'controlplane.cluster.x-k8s.io/v1alpha3');
    const ms = spec(obj('MachineSet', 'old-ms', { labels: { 'cluster.x-k8s.io/cluster-name': 'old' } }), {
      template: {
        spec: { infrastructureRef: { apiVersion: infra, kind: 'ProxmoxMachineTemplate', name: 'old-w' } },
      },
    });
    const w = obj('ProxmoxMachineTemplate', 'old-w', {}, infra);
    const g = selectGraph({ custom: [c, cp, ms, w], secrets: [], configMaps: [] });
    expect(new Map(g.selected.map((s) => [s.object, s.reason]))).toEqual(
      new Map<KubeObject, string>([
        [c, 'root'],
        [cp, 'reference'],
        [ms, 'cluster-label'],
        [w, 'reference'],
      ]),
    );
  });
});

describe('selectGraph, edges', () => {
  const names = (g: Selection) =>
    Object.fromEntries(g.selected.map((s) => [s.object.metadata.name, s.reason]));

  it('only Cluster API groups make roots: a database operator’s Cluster carries neither itself nor its Secrets', () => {
    expect(isClusterApiGroup('cluster.x-k8s.io/v1beta2')).toBe(true);
    expect(isClusterApiGroup('infrastructure.cluster.x-k8s.io/v1alpha2')).toBe(true);
    expect(isClusterApiGroup('postgresql.cnpg.io/v1')).toBe(false);
    expect(isClusterApiGroup('xcluster.x-k8s.io/v1')).toBe(false);
    expect(isClusterApiGroup('cluster.x-k8s.io.example.com/v1')).toBe(false);
    expect(isClusterApiGroup('v1')).toBe(false);
    const pg = obj('Cluster', 'pg', {}, 'postgresql.cnpg.io/v1');
    const g = selectGraph({
      custom: [pg],
      secrets: [secret('pg-kubeconfig'), secret('pg-talos')],
      configMaps: [],
    });
    expect(g.selected).toEqual([]);
    expect(g.leftBehind).toEqual(['Cluster ns/pg']);
  });

  it('the first rule that reaches an object names why it is carried', () => {
    const c = obj('Cluster', 'c', { labels: { 'clusterctl.cluster.x-k8s.io/move': '' } });
    const s = secret('c-kubeconfig', { labels: { 'clusterctl.cluster.x-k8s.io/move': '' } });
    expect(names(selectGraph({ custom: [c], secrets: [s], configMaps: [] }))).toEqual({
      c: 'root',
      'c-kubeconfig': 'move-label',
    });
  });

  it('only a Cluster owns <name>-<purpose> Secrets and names a cluster-name label: another Cluster API kind of that name does not', () => {
    // A MachineDeployment "web" beside Secrets and objects that would belong to a Cluster "web".
    const web = obj('MachineDeployment', 'web');
    const labelled = obj('MachineSet', 'web-ms', { labels: { 'cluster.x-k8s.io/cluster-name': 'web' } });
    const g = selectGraph({
      custom: [web, labelled],
      secrets: [secret('web-kubeconfig'), secret('web-talos')],
      configMaps: [],
    });
    expect(g.selected).toEqual([]);
  });

  it('an object without the cluster-name label is not carried for a Cluster that happens to be named "undefined"', () => {
    const odd = obj('Cluster', 'undefined');
    const loose = obj('MachineSet', 'loose');
    const g = selectGraph({ custom: [odd, loose], secrets: [], configMaps: [] });
    expect(names(g)).toEqual({ undefined: 'root' });
  });

  it('a Secret is soft-owned only under its Cluster’s name prefix', () => {
    const c = obj('Cluster', 'c1');
    // 'zz-ca' has the prefix's length and a soft-owned suffix after it, but not the prefix.
    const g = selectGraph({ custom: [c], secrets: [secret('zz-ca'), secret('c1-ca')], configMaps: [] });
    expect(names(g)).toEqual({ c1: 'root', 'c1-ca': 'soft-owned-secret' });
  });

  it('an object without a uid is never carried (nothing could own or restore it), and says so', () => {
    const c = obj('Cluster', 'c1');
    const bare: KubeObject = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name: 'bare', namespace: 'ns', labels: { 'cluster.x-k8s.io/cluster-name': 'c1' } },
    };
    const g = selectGraph({ custom: [c, bare], secrets: [], configMaps: [] });
    expect(names(g)).toEqual({ c1: 'root' });
    expect(g.leftBehind).toEqual([
      'Machine ns/bare (labelled for cluster c1, which namespace ns does not hold, and no owner or reference leads to it)',
    ]);
  });

  it('follows chains listed children first, as many passes as they need', () => {
    const c = obj('Cluster', 'deep');
    const md = obj('MachineDeployment', 'md', own(c));
    const ms = obj('MachineSet', 'ms', own(md));
    const m = obj('Machine', 'm', own(ms));
    const g = selectGraph({ custom: [m, ms, md, c], secrets: [], configMaps: [] });
    expect(names(g)).toEqual({ deep: 'root', md: 'owner-chain', ms: 'owner-chain', m: 'owner-chain' });
    expect(g.leftBehind).toEqual([]);
  });

  it('references are followed from carried objects only, through a chain of them, a ClusterClass named for what it is', () => {
    const infra = 'infrastructure.cluster.x-k8s.io/v1alpha2';
    const tmpl = obj('ProxmoxMachineTemplate', 't', {}, infra);
    const pc = {
      ...obj('TalosControlPlane', 'pc', {}, 'controlplane.cluster.x-k8s.io/v1alpha3'),
      spec: { infrastructureTemplate: { apiVersion: infra, kind: 'ProxmoxMachineTemplate', name: 't' } },
    };
    const stray = {
      ...obj('TalosControlPlane', 'stray', {}, 'controlplane.cluster.x-k8s.io/v1alpha3'),
      spec: { infrastructureTemplate: { apiVersion: infra, kind: 'ProxmoxMachineTemplate', name: 'other' } },
    };
    const other = obj('ProxmoxMachineTemplate', 'other', {}, infra);
    const cls = obj('ClusterClass', 'gold', { labels: {} });
    const c = {
      ...obj('Cluster', 'c'),
      spec: {
        controlPlaneRef: { apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'TalosControlPlane', name: 'pc' },
      },
    };
    // Listed so that one pass of the reference step reaches pc but not yet t.
    const g = selectGraph({ custom: [tmpl, pc, stray, other, c], secrets: [], configMaps: [] });
    expect(names(g)).toEqual({ c: 'root', pc: 'reference', t: 'reference' });
    expect(g.leftBehind).toEqual(['TalosControlPlane ns/stray', 'ProxmoxMachineTemplate ns/other']);
    const topo = { ...obj('Cluster', 'topo'), spec: { topology: { classRef: { name: 'gold' } } } };
    const clsOnly = selectGraph({
      custom: [{ ...cls, kind: 'ClusterClassLike' }, topo],
      secrets: [],
      configMaps: [],
    });
    expect(names(clsOnly)).toEqual({ topo: 'root' });
  });

  it('the cluster-name label carries through chains too, and only for a Cluster of that namespace', () => {
    const c = obj('Cluster', 'c');
    const labelled = obj('MachineDeployment', 'md', { labels: { 'cluster.x-k8s.io/cluster-name': 'c' } });
    const owned = obj('MachineSet', 'ms', own(labelled));
    const other = obj('MachineDeployment', 'md2', {
      namespace: 'elsewhere',
      labels: { 'cluster.x-k8s.io/cluster-name': 'c' },
    });
    const g = selectGraph({ custom: [owned, labelled, other, c], secrets: [], configMaps: [] });
    expect(names(g)).toEqual({ c: 'root', md: 'cluster-label', ms: 'owner-chain' });
  });

  it('what an object with the move label owns comes along; Secrets and ConfigMaps are never reported left behind', () => {
    const cm = obj('ConfigMap', 'cm', { labels: { 'clusterctl.cluster.x-k8s.io/move-hierarchy': '' } }, 'v1');
    const child = obj('ConfigMap', 'child', own(cm), 'v1');
    const lone = obj('ConfigMap', 'lone', {}, 'v1');
    const g = selectGraph({ custom: [], secrets: [secret('s')], configMaps: [child, cm, lone] });
    expect(names(g)).toEqual({ cm: 'move-label', child: 'owner-chain' });
    expect(g.leftBehind).toEqual([]);
  });
});
