/**
 * `ferry snapshot --kubeconfig` end to end against the lab API server loaded with
 * examples/lab-cluster: the live snapshot must say what the files snapshot of the same cluster says.
 *
 * The CLI cannot be given a page size or a TLS dialer, so collectSnapshot is wrapped to receive
 * both: a small page size (every list spans several pages on a server with real continue tokens)
 * and a fetchPeerCertificate that sends the control planes' advertised 10.20.0.x addresses to
 * loopback stand-ins and refuses anything off 127.0.0.0/8. Everything else is the production path.
 */
import { X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { memoryIo } from '../cli/io.js';
import { runCli } from '../cli/run-cli.js';
import { deriveFacts } from '../facts/derive.js';
import type { Fact } from '../facts/model.js';
import { versionInfo } from '../lab/apiserver/discovery.js';
import {
  type LabFilesCluster,
  OPAQUE_SECRET_VALUE,
  startLabFilesCluster,
} from '../lab/testing-files-cluster.js';
import { resourcePath } from '../ports/kube-kinds.js';
import type { CollectDeps } from './collect.js';
import { describeSource, type KubeObject, RESOURCE_KEYS, type Snapshot } from './model.js';
import { readSavedSnapshot } from './store.js';

const injected = vi.hoisted(() => ({ deps: {} as Partial<CollectDeps> }));

vi.mock('./collect.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./collect.js')>();
  return {
    ...real,
    collectSnapshot: vi.fn((deps: CollectDeps) => real.collectSnapshot({ ...deps, ...injected.deps })),
  };
});

const PAGE_SIZE = 5;
const PODS = '/registry/pods/';

let lab: LabFilesCluster;
let live: Snapshot;
let files: Snapshot;
let out: string;
let cliOut: { code: number; stdout: string; stderr: string };
let listsBefore: number;

async function snapshotCli(dir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo({ cwd: lab.dir });
  const code = await runCli(['snapshot', '--kubeconfig', lab.kubeconfig, '-o', dir], io);
  return { code, stdout: io.out, stderr: io.err };
}

beforeAll(async () => {
  lab = await startLabFilesCluster();
  files = lab.files;
  injected.deps = { pageSize: PAGE_SIZE, fetchPeerCertificate: lab.fetchPeerCertificate };
  // The wrapper must be what the CLI reaches, or the real dialer would try 10.20.0.x.
  expect(vi.isMockFunction((await import('./collect.js')).collectSnapshot)).toBe(true);
  listsBefore = lab.store.lists.length;
  out = join(lab.dir, 'snap');
  cliOut = await snapshotCli(out);
  live = await readSavedSnapshot(out);
});
afterAll(async () => lab?.close());

const id = (o: KubeObject) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const ids = (objs: KubeObject[]) => objs.map(id).sort();

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

describe('ferry snapshot against the lab API server holding examples/lab-cluster', () => {
  it('exits 0 with a one-line summary and no warnings, one progress line per list on stderr', () => {
    const lines = cliOut.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(21);
    const [listed, absent] = [lines.slice(0, 18), lines.slice(18)];
    for (const l of listed) expect(l).toMatch(/^listed [a-z]+( in kube-system)?: \d+ in \d+\.\d s$/);
    // The lab serves no Argo CD or Flux CRDs: their lists are answered "none", not "not observed".
    expect(absent).toEqual([
      'applications.argoproj.io: none (not served here: its controller is not installed)',
      'kustomizations.kustomize.toolkit.fluxcd.io: none (not served here: its controller is not installed)',
      'helmreleases.helm.toolkit.fluxcd.io: none (not served here: its controller is not installed)',
    ]);
    expect(lines).toContainEqual(expect.stringMatching(/^listed pods: 47 in /));
    expect(cliOut.code).toBe(0);
    expect(cliOut.stdout).toBe(
      `snapshot of ${lab.server.url} (context ${lab.context}) written to ${out}: 8 nodes, 47 pods, 12 static pods, 4 served certificates\n`,
    );
    expect(live.manifest.source).toEqual({ kind: 'live', server: lab.server.url, context: lab.context });
    expect([...live.manifest.parts].sort()).toEqual([
      'flags',
      'kubeadm',
      'kubelet',
      'resources',
      'served-certs',
      'server-version',
    ]);
  });

  it('records what GET /version answered, and facts cite it for the Kubernetes version', () => {
    expect(live.serverVersion).toEqual({
      source: { kind: 'api', server: lab.server.url, path: '/version' },
      info: versionInfo('v1.32.4'),
    });
    const facts = deriveFacts(live);
    const version = facts.cluster.kubernetesVersion;
    expect(version.value).toBe('v1.32.4');
    expect(version.conflict).toBeUndefined();
    expect(describeSource(version.provenance[0]!)).toBe(`GET /version gitVersion (${lab.server.url})`);
    // The files snapshot of the same cluster has no server to ask.
    expect(files.serverVersion).toBeUndefined();
    expect(deriveFacts(files).cluster.kubernetesVersion.provenance.some((p) => p.kind === 'api')).toBe(false);
    // The kubelets' own versions come with the Node objects, for the version-window checks.
    expect(facts.nodes.kubeletVersions.value).toEqual([{ version: 'v1.32.4', nodes: 8 }]);
    expect(live.resources.nodes.map((n) => n.status?.nodeInfo?.kubeletVersion)).toEqual(
      Array(8).fill('v1.32.4'),
    );
  });

  it('holds the same objects as the files snapshot, each once, typed although list items come untyped', () => {
    const typed = (objs: KubeObject[]) => objs.map((o) => `${o.apiVersion} ${id(o)}`).sort();
    for (const key of RESOURCE_KEYS) {
      const got = typed(live.resources[key]);
      expect(got, key).toEqual(typed(files.resources[key]));
      expect(new Set(got).size, key).toBe(got.length);
    }
    // Not vacuous: the example is a cluster with something in it.
    expect(live.resources.nodes).toHaveLength(8);
    expect(live.resources.pods).toHaveLength(47);
    expect(ids(live.resources.poddisruptionbudgets)).toEqual([
      'PodDisruptionBudget shop/api',
      'PodDisruptionBudget shop/checkout',
      'PodDisruptionBudget shop/frontend',
      'PodDisruptionBudget shop/postgres',
    ]);
    expect(live.resources.deployments.length).toBeGreaterThan(3);
    expect(live.resources.statefulsets.length + live.resources.daemonsets.length).toBeGreaterThan(2);
    expect(live.resources.cronjobs.length + live.resources.jobs.length).toBeGreaterThan(1);
    expect(live.resources.namespaces.map((n) => n.metadata.name).sort()).toEqual([
      'apps',
      'default',
      'kube-node-lease',
      'kube-public',
      'kube-system',
      'shop',
    ]);
  });

  it('read every list in pages of the requested size, following continue tokens', () => {
    const calls = lab.store.lists.slice(listsBefore).filter((c) => c.prefix === PODS);
    expect(calls.every((c) => c.outcome === 'ok')).toBe(true);
    expect(calls.filter((c) => !c.continued)).toHaveLength(1);
    expect(calls.filter((c) => c.continued)).toHaveLength(Math.ceil(47 / PAGE_SIZE) - 1);
    const nodes = lab.store.lists.slice(listsBefore).filter((c) => c.prefix === '/registry/nodes/');
    expect(nodes.map((c) => c.continued)).toEqual([false, true]);
  });

  it('keeps owner references (kind and name) as the cluster has them', () => {
    const owners = (s: Snapshot) =>
      Object.fromEntries(
        s.resources.pods.map((p) => [
          id(p),
          (p.metadata.ownerReferences ?? []).map((o) => `${o.kind}/${o.name}`),
        ]),
      );
    const got = owners(live);
    expect(got).toEqual(owners(files));
    expect(got['Pod kube-system/kube-apiserver-cp-1']).toEqual(['Node/cp-1']);
  });

  it('keeps the configuration ConfigMaps', () => {
    expect(ids(live.resources.configmaps)).toEqual([
      'ConfigMap kube-public/cluster-info',
      'ConfigMap kube-system/cilium-config',
      'ConfigMap kube-system/coredns',
      'ConfigMap kube-system/kubeadm-config',
      'ConfigMap kube-system/kubelet-config',
    ]);
    const data = (s: Snapshot, name: string) =>
      s.resources.configmaps.find((c) => c.metadata.name === name)?.data as Record<string, string>;
    for (const name of ['kubeadm-config', 'kubelet-config', 'coredns', 'cilium-config', 'cluster-info'])
      expect(data(live, name), name).toEqual(data(files, name));
    expect(live.kubeadm.clusterConfiguration?.source).toMatchObject({
      kind: 'object',
      objectKind: 'ConfigMap',
      namespace: 'kube-system',
      name: 'kubeadm-config',
    });
    expect(live.kubelet?.source).toMatchObject({ objectKind: 'ConfigMap', name: 'kubelet-config' });
  });

  it('keeps only the bindings with anonymous subjects', () => {
    expect(ids(live.resources.anonymousBindings)).toEqual([
      'ClusterRoleBinding /lb-healthcheck',
      'ClusterRoleBinding /system:public-info-viewer',
      'RoleBinding kube-public/kubeadm:bootstrap-signer-clusterinfo',
    ]);
  });

  it('keeps the bootstrap token id, expiry and usages, and no secret anywhere in the output', async () => {
    // The cluster does hold the secret, in data and in kubectl's last-applied copy.
    const stored = await lab.client.get<KubeObject>(
      resourcePath('secrets', { namespace: 'kube-system', name: 'bootstrap-token-abcdef' }),
    );
    expect(stored.data?.['token-secret']).toBe(Buffer.from(lab.tokenSecret).toString('base64'));
    expect(stored.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).toContain(
      Buffer.from(lab.tokenSecret).toString('base64'),
    );

    expect(live.resources.bootstrapTokens).toEqual(files.resources.bootstrapTokens);
    expect(live.resources.bootstrapTokens).toEqual([
      expect.objectContaining({
        id: 'abcdef',
        expiration: '2026-11-30T16:40:12Z',
        usages: ['authentication', 'signing'],
        authExtraGroups: ['system:bootstrappers:kubeadm:default-node-token'],
      }),
    ]);
    const forbidden = [
      lab.tokenSecret,
      Buffer.from(lab.tokenSecret).toString('base64'),
      OPAQUE_SECRET_VALUE,
      Buffer.from(OPAQUE_SECRET_VALUE).toString('base64'),
      'PRIVATE KEY',
      'managedFields',
      'last-applied-configuration',
    ];
    const written = filesUnder(out);
    expect(written.length).toBeGreaterThan(3);
    for (const f of written) {
      const text = readFileSync(f, 'utf8');
      for (const s of forbidden) expect(text.includes(s), `${f} contains ${s.slice(0, 12)}…`).toBe(false);
    }
  });

  it('parses the mirror pods into static pods with the flags of the manifests', () => {
    const byInstance = (s: Snapshot) =>
      new Map(s.staticPods.map((p) => [`${p.component}@${p.node}`, p] as const));
    const got = byInstance(live);
    const want = byInstance(files);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    expect(got.size).toBe(12);
    for (const [instance, pod] of got) {
      expect(pod.flags, instance).toEqual(want.get(instance)?.flags);
      expect(pod.image, instance).toBe(want.get(instance)?.image);
      expect(pod.hostPathVolumes, instance).toEqual(want.get(instance)?.hostPathVolumes);
      expect(pod.source, instance).toEqual({
        kind: 'object',
        objectKind: 'Pod',
        namespace: 'kube-system',
        name: `${pod.component}-${pod.node}`,
      });
    }
    expect(got.get('kube-apiserver@cp-2')?.flags).toContainEqual({
      name: 'advertise-address',
      value: '10.20.0.12',
    });
  });

  it('derives the same network, cluster and service-account issuer facts as the files snapshot', () => {
    const a = deriveFacts(live);
    const b = deriveFacts(files);
    const values = (group: Record<string, Fact<unknown>>) =>
      Object.fromEntries(Object.entries(group).map(([k, f]) => [k, f.value]));
    expect(values({ ...a.network })).toEqual(values({ ...b.network }));
    expect(values({ ...a.cluster })).toEqual(values({ ...b.cluster }));
    expect(a.apiserver.serviceAccountIssuers.value).toEqual(b.apiserver.serviceAccountIssuers.value);
    // Derived, not missing: the comparison above is between real values.
    for (const f of [
      ...Object.values(a.network),
      ...Object.values(a.cluster),
      a.apiserver.serviceAccountIssuers,
    ])
      expect(f.value, f.key).toBeDefined();
    expect(a.network.podSubnets.value).toEqual(['10.244.0.0/16']);
    expect(a.cluster.controlPlaneEndpoint.value?.url).toBe('https://k8s-api.lab.example:6443');
    expect(a.apiserver.serviceAccountIssuers.value).toEqual(['https://kubernetes.default.svc.cluster.local']);
    // The live facts cite the cluster's objects, not the example's files.
    expect(a.network.podSubnets.provenance.some((s) => s.kind === 'file')).toBe(false);
  });

  it('reads the served certificates of the endpoint and of each advertised apiserver, on loopback only', () => {
    const fp = (pem: string) => new X509Certificate(pem).fingerprint256.replace(/:/g, '').toLowerCase();
    const served = new Map(live.servedCertificates.map((c) => [c.address, c]));
    const endpoint = served.get(lab.server.address);
    expect(endpoint?.role).toBe('endpoint');
    expect(endpoint?.certificate?.fingerprintSha256).toBe(fp(lab.servingCertPem));
    expect([...lab.standInCerts.keys()].sort()).toEqual([
      '10.20.0.11:6443',
      '10.20.0.12:6443',
      '10.20.0.13:6443',
    ]);
    for (const [address, pem] of lab.standInCerts) {
      const c = served.get(address);
      const node = { '10.20.0.11:6443': 'cp-1', '10.20.0.12:6443': 'cp-2', '10.20.0.13:6443': 'cp-3' }[
        address
      ];
      expect(c, address).toMatchObject({ role: 'control-plane', node });
      expect(c?.certificate?.fingerprintSha256, address).toBe(fp(pem));
      expect(c?.certificate?.ipAddresses, address).toContain(address.replace(/:\d+$/, ''));
    }
    expect([...lab.dials].sort()).toEqual([
      '10.20.0.11:6443',
      '10.20.0.12:6443',
      '10.20.0.13:6443',
      lab.server.address,
    ]);
    expect(lab.connections.length).toBe(4);
    for (const c of lab.connections) expect(c).toMatch(/^127\.\d+\.\d+\.\d+:\d+$/);
  });

  it('starts a list over when its continue token expires mid-way, and returns every object once', async () => {
    // Between two pages of the pod list someone creates a pod and the store is compacted past the
    // revision the list is pinned to: the next page must answer 410 Expired.
    let continuedPages = 0;
    let fired = false;
    lab.store.beforeList = async (prefix, continued) => {
      if (fired || prefix !== PODS || !continued || ++continuedPages < 2) return;
      fired = true;
      await lab.client.create(resourcePath('pods', { namespace: 'default' }), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'late-arrival', namespace: 'default' },
        spec: { nodeName: 'worker-1', containers: [{ name: 'sh', image: 'busybox:1.36' }] },
      });
      await lab.store.compact(await lab.store.revision());
    };
    const mark = lab.store.lists.length;
    const again = join(lab.dir, 'snap-expired');
    let r: Awaited<ReturnType<typeof snapshotCli>>;
    try {
      r = await snapshotCli(again);
    } finally {
      lab.store.beforeList = undefined;
    }
    // Said once, and the pods count is of the second attempt only.
    expect(r.stderr.match(/continue token expired/g)).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^pods: the continue token expired \(HTTP 410 Gone\) after 10 objects; listing again from the start \(restart 1 of 3\)$/m,
    );
    expect(r.stderr).toMatch(/^listed pods: 48 in /m);
    expect(r.code).toBe(0);
    expect(fired).toBe(true);

    const calls = lab.store.lists.slice(mark).filter((c) => c.prefix === PODS);
    const expiredAt = calls.findIndex((c) => c.outcome === 'compacted');
    expect(calls.filter((c) => c.outcome === 'compacted')).toHaveLength(1);
    expect(calls[expiredAt]?.continued).toBe(true);
    // Started over from the first page, then read to the end.
    expect(calls[expiredAt + 1]).toEqual({ prefix: PODS, continued: false, outcome: 'ok' });
    expect(calls.slice(expiredAt + 1).filter((c) => c.continued)).toHaveLength(Math.ceil(48 / PAGE_SIZE) - 1);

    const pods = ids((await readSavedSnapshot(again)).resources.pods);
    expect(new Set(pods).size).toBe(pods.length);
    expect(pods).toEqual([...ids(files.resources.pods), 'Pod default/late-arrival'].sort());
  });
});
