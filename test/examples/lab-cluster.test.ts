/**
 * Regenerates examples/lab-cluster into a temp dir and checks it: the files-directory layout, that
 * names/IPs/UIDs agree across files, that every trap the README documents has its evidence in the
 * files, and that the committed copy is what the generator produces (key material aside).
 */
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  CLUSTER,
  CONTROL_PLANES,
  KEY_MATERIAL_FILES,
  listFiles,
  makeExample,
  NODES,
  STATIC_COMPONENTS,
  TRAPS,
} from '../../scripts/make-example.js';
import { FerryError } from '../../src/errors.js';
import { x509 } from '../../src/pki/x509.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const COMMITTED = join(REPO, 'examples', 'lab-cluster');

// biome-ignore lint/suspicious/noExplicitAny: the tests walk arbitrary Kubernetes objects
type Any = any;

let tmp: string;
let out: string;
let objects: Any[];

async function text(rel: string): Promise<string> {
  return readFile(join(out, rel), 'utf8');
}

async function yamlDocs(rel: string): Promise<Any[]> {
  return parseAllDocuments(await text(rel))
    .map((d) => d.toJS())
    .filter((d) => d !== null);
}

/** Every object in resources/: Lists expanded, multi-document YAML split. */
async function loadResources(): Promise<Any[]> {
  const all: Any[] = [];
  for (const f of (await listFiles(out)).filter((p) => p.startsWith('resources/'))) {
    const docs = f.endsWith('.json') ? [JSON.parse(await text(f))] : await yamlDocs(f);
    for (const d of docs) all.push(...(d.kind === 'List' ? d.items : [d]));
  }
  return all;
}

function find(kind: string, name: string, namespace?: string): Any {
  const o = objects.find(
    (x) =>
      x.kind === kind &&
      x.metadata.name === name &&
      (namespace === undefined || x.metadata.namespace === namespace),
  );
  if (!o) throw new Error(`${kind} ${namespace ?? ''}/${name} not in resources`);
  return o;
}

function ofKind(kind: string): Any[] {
  return objects.filter((o) => o.kind === kind);
}

function flagsOf(manifest: Any): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const arg of manifest.spec.containers[0].command.slice(1) as string[]) {
    const match = /^--([^=]+)=(.*)$/.exec(arg);
    if (!match) throw new Error(`unexpected argument ${arg}`);
    const [, k, v] = match as unknown as [string, string, string];
    m.set(k, [...(m.get(k) ?? []), v]);
  }
  return m;
}

async function manifest(node: string, component: string): Promise<Any> {
  return parse(await text(`manifests/${node}/${component}.yaml`));
}

async function clusterConfiguration(): Promise<Any> {
  return (await yamlDocs('kubeadm-config.yaml')).find((d) => d.kind === 'ClusterConfiguration');
}

function selects(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

function semverLess(a: string, b: string): boolean {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) < (pb[i] ?? 0);
  return false;
}

function isKeyMaterial(rel: string): boolean {
  return KEY_MATERIAL_FILES.some((k) => (k.endsWith('/') ? rel.startsWith(k) : rel === k));
}

/** Masks the values that carry key material so the rest of those files can still be compared. */
function maskSecrets(s: string): string {
  return s.replace(
    /((?:secret|token-secret|certificate-authority-data|jws-kubeconfig-[a-z0-9]+): ).*/g,
    '$1<masked>',
  );
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ferry-example-'));
  out = join(tmp, 'lab-cluster');
  await makeExample(out);
  objects = await loadResources();
});

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('examples/lab-cluster layout', () => {
  it('has every part of a files directory', async () => {
    const files = await listFiles(out);
    const expected = [
      'README.md',
      'kubeadm-config.yaml',
      'encryption-config.yaml',
      'audit.log',
      'etcd/member-list.json',
      'etcd/endpoint-status.json',
      'etcd/version.json',
      'etcd/alarms.json',
      ...['ca', 'apiserver', 'front-proxy-ca', 'etcd/ca', 'etcd/server', 'etcd/peer'].flatMap((b) => [
        `pki/${b}.crt`,
        `pki/${b}.key`,
      ]),
      'pki/sa.key',
      'pki/sa.pub',
      ...CONTROL_PLANES.flatMap((c) => STATIC_COMPONENTS.map((s) => `manifests/${c.name}/${s}.yaml`)),
    ];
    for (const f of expected) expect(files, f).toContain(f);
    expect(files.filter((f) => f.startsWith('resources/')).length).toBeGreaterThan(10);
  });

  it('stays under 1 MB', async () => {
    let total = 0;
    for (const f of await listFiles(out)) total += (await stat(join(out, f))).size;
    expect(total).toBeLessThan(1024 * 1024);
  });

  it('writes secret files with mode 0600', async () => {
    for (const f of [
      'encryption-config.yaml',
      'resources/bootstrap-token.yaml',
      'pki/ca.key',
      'pki/sa.key',
    ]) {
      expect((await stat(join(out, f))).mode & 0o777, f).toBe(0o600);
    }
  });

  it('refuses to replace a directory it did not write, and leaves it alone', async () => {
    const other = join(tmp, 'not-an-example');
    await mkdir(other);
    await writeFile(join(other, 'precious.txt'), 'keep me');
    await expect(makeExample(other)).rejects.toSatisfy(
      (e: unknown) => e instanceof FerryError && e.kind === 'usage' && e.exitCode === 2,
    );
    expect(await readFile(join(other, 'precious.txt'), 'utf8')).toBe('keep me');
  });

  it('is committed, and the committed copy is what the script produces (key material aside)', async () => {
    expect(existsSync(COMMITTED), 'run `npx tsx scripts/make-example.ts` and commit the result').toBe(true);
    const [mine, theirs] = await Promise.all([listFiles(out), listFiles(COMMITTED)]);
    expect(theirs).toEqual(mine);
    for (const f of mine) {
      const [a, b] = await Promise.all([
        readFile(join(out, f), 'utf8'),
        readFile(join(COMMITTED, f), 'utf8'),
      ]);
      if (f.startsWith('pki/')) continue;
      if (isKeyMaterial(f)) expect(maskSecrets(b), f).toBe(maskSecrets(a));
      else expect(b, `${f} is stale: regenerate examples/lab-cluster`).toBe(a);
    }
    // Keys are fresh on every run.
    expect(await readFile(join(COMMITTED, 'pki/ca.crt'), 'utf8')).not.toBe(await text('pki/ca.crt'));
  });
});

describe('examples/lab-cluster consistency', () => {
  it('has the nodes of the brief with kubeadm labels, addresses and node info', () => {
    const nodes = ofKind('Node');
    expect(nodes.map((n) => n.metadata.name).sort()).toEqual(NODES.map((n) => n.name).sort());
    for (const def of NODES) {
      const n = find('Node', def.name);
      expect(n.status.addresses).toContainEqual({ address: def.ip, type: 'InternalIP' });
      expect(n.status.nodeInfo.kubeletVersion).toBe(CLUSTER.kubernetesVersion);
      expect(n.status.nodeInfo.osImage).toMatch(/^Debian GNU\/Linux 12/);
      expect(n.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\//);
      expect(n.status.capacity.cpu).toBeDefined();
      expect(n.status.allocatable.pods).toBe('150');
      expect('node-role.kubernetes.io/control-plane' in n.metadata.labels).toBe(def.role === 'control-plane');
    }
    expect(CONTROL_PLANES.map((c) => c.ip)).toEqual(['10.20.0.11', '10.20.0.12', '10.20.0.13']);
    expect(NODES.filter((n) => n.role === 'worker').map((n) => n.ip)).toEqual([
      '10.20.0.21',
      '10.20.0.22',
      '10.20.0.23',
      '10.20.0.24',
      '10.20.0.25',
    ]);
  });

  it('has unique UIDs, and every owner reference and nodeName resolves', () => {
    const uids = objects.map((o) => o.metadata.uid).filter(Boolean);
    expect(new Set(uids).size).toBe(uids.length);
    const byUid = new Map(objects.map((o) => [o.metadata.uid, o]));
    const nodeNames = new Set(NODES.map((n) => n.name));
    let owned = 0;
    for (const o of objects) {
      for (const ref of o.metadata.ownerReferences ?? []) {
        const owner = byUid.get(ref.uid);
        expect(owner, `${o.kind} ${o.metadata.name} → ${ref.kind} ${ref.name}`).toBeDefined();
        expect(owner.kind).toBe(ref.kind);
        expect(owner.metadata.name).toBe(ref.name);
        if (o.kind === 'Pod' && ref.kind !== 'Node') {
          const sel = owner.spec.selector.matchLabels;
          expect(selects(sel, o.metadata.labels), `${o.metadata.name} matches ${owner.metadata.name}`).toBe(
            true,
          );
        }
        owned++;
      }
      if (o.kind === 'Pod') expect(nodeNames.has(o.spec.nodeName), o.metadata.name).toBe(true);
    }
    expect(owned).toBeGreaterThan(40);
    // ReplicaSets own pods, Deployments own ReplicaSets.
    expect(ofKind('ReplicaSet').every((rs) => rs.metadata.ownerReferences?.[0]?.kind === 'Deployment')).toBe(
      true,
    );
  });

  it('has a mirror pod per control plane and component, carrying the manifest command line', async () => {
    for (const cp of CONTROL_PLANES) {
      for (const component of STATIC_COMPONENTS) {
        const pod = find('Pod', `${component}-${cp.name}`, 'kube-system');
        expect(pod.metadata.annotations['kubernetes.io/config.mirror']).toBeDefined();
        expect(pod.metadata.ownerReferences[0]).toMatchObject({ kind: 'Node', name: cp.name });
        expect(pod.spec.nodeName).toBe(cp.name);
        expect(pod.spec.containers[0].command).toEqual(
          (await manifest(cp.name, component)).spec.containers[0].command,
        );
      }
    }
  });

  it('has realistic per-node static pod command lines', async () => {
    for (const cp of CONTROL_PLANES) {
      const api = flagsOf(await manifest(cp.name, 'kube-apiserver'));
      expect(api.get('advertise-address')).toEqual([cp.ip]);
      expect(api.get('etcd-servers')).toEqual(['https://127.0.0.1:2379']);
      expect(api.get('service-account-key-file')).toEqual(['/etc/kubernetes/pki/sa.pub']);
      expect(api.get('enable-admission-plugins')).toEqual(['NodeRestriction']);
      expect(api.get('service-cluster-ip-range')).toEqual([CLUSTER.serviceSubnet]);
      const etcd = flagsOf(await manifest(cp.name, 'etcd'));
      expect(etcd.get('name')).toEqual([cp.name]);
      expect(etcd.get('advertise-client-urls')).toEqual([`https://${cp.ip}:2379`]);
      expect(etcd.get('initial-cluster')?.[0]).toContain(`${cp.name}=https://${cp.ip}:2380`);
      const kcm = flagsOf(await manifest(cp.name, 'kube-controller-manager'));
      expect(kcm.get('cluster-cidr')).toEqual([CLUSTER.podSubnet]);
      const apiPod = await manifest(cp.name, 'kube-apiserver');
      expect(apiPod.spec.volumes).toContainEqual({
        hostPath: { path: '/etc/kubernetes/pki', type: 'DirectoryOrCreate' },
        name: 'k8s-certs',
      });
    }
  });

  it('agrees on networking, endpoint and versions across kubeadm config, ConfigMaps and services', async () => {
    const cc = await clusterConfiguration();
    expect(cc.apiVersion).toBe('kubeadm.k8s.io/v1beta4');
    expect(cc.controlPlaneEndpoint).toBe('k8s-api.lab.example:6443');
    expect(cc.networking).toEqual({
      dnsDomain: 'cluster.local',
      podSubnet: '10.244.0.0/16',
      serviceSubnet: '10.96.0.0/12',
    });
    expect(cc.kubernetesVersion).toMatch(/^v1\.32\.\d+$/);
    // The ConfigMap kubeadm keeps in the cluster says the same.
    expect(parse(find('ConfigMap', 'kubeadm-config', 'kube-system').data.ClusterConfiguration)).toEqual(cc);
    const kubelet = parse(find('ConfigMap', 'kubelet-config', 'kube-system').data.kubelet);
    const dns = find('Service', 'kube-dns', 'kube-system');
    expect(dns.spec.clusterIP).toBe('10.96.0.10');
    expect(kubelet.clusterDNS).toEqual([dns.spec.clusterIP]);
    expect(kubelet.clusterDomain).toBe('cluster.local');
    expect(find('Service', 'kubernetes', 'default').spec.clusterIP).toBe('10.96.0.1');
    const slice = find('EndpointSlice', 'kubernetes', 'default');
    expect(slice.endpoints.map((e: Any) => e.addresses[0])).toEqual(CONTROL_PLANES.map((c) => c.ip));
    for (const n of ofKind('Node')) expect(n.spec.podCIDR.startsWith('10.244.')).toBe(true);
    for (const p of ofKind('Pod')) {
      if (!p.spec.hostNetwork) expect(p.status.podIP.startsWith('10.244.'), p.metadata.name).toBe(true);
    }
  });

  it('writes etcd JSON as etcdctl does, member IDs as bare numbers above 2^53', async () => {
    const raw = await text('etcd/member-list.json');
    const ids = [...raw.matchAll(/"ID":(\d+)/g)].map((m) => m[1] as string);
    expect(ids).toHaveLength(3);
    for (const id of ids) expect(BigInt(id) > 2n ** 53n).toBe(true);
    const list = JSON.parse(raw);
    expect(list.members.map((m: Any) => m.name)).toEqual(CONTROL_PLANES.map((c) => c.name));
    expect(list.members.map((m: Any) => m.peerURLs[0])).toEqual(
      CONTROL_PLANES.map((c) => `https://${c.ip}:2380`),
    );
    // The same ids (compared as text: JSON.parse would round them) in the endpoint status.
    const status = await text('etcd/endpoint-status.json');
    const statusIds = [...status.matchAll(/"member_id":(\d+)/g)].map((m) => m[1]);
    expect(statusIds).toEqual(ids);
    const leaders = new Set([...status.matchAll(/"leader":(\d+)/g)].map((m) => m[1]));
    expect(leaders.size).toBe(1);
    expect(ids).toContain([...leaders][0]);
    expect(JSON.parse(status).map((s: Any) => s.Endpoint)).toEqual(
      CONTROL_PLANES.map((c) => `https://${c.ip}:2379`),
    );
    expect(JSON.parse(await text('etcd/alarms.json')).alarms).toBeUndefined();
  });

  it('signs kube-public/cluster-info with the bootstrap token over the cluster CA', async () => {
    const info = find('ConfigMap', 'cluster-info', 'kube-public');
    const kubeconfig = parse(info.data.kubeconfig);
    const caData = Buffer.from(
      kubeconfig.clusters[0].cluster['certificate-authority-data'],
      'base64',
    ).toString();
    expect(caData).toBe(await text('pki/ca.crt'));
    expect(kubeconfig.clusters[0].cluster.server).toBe('https://k8s-api.lab.example:6443');
    const secret = find('Secret', 'bootstrap-token-abcdef', 'kube-system');
    const dec = (k: string) => Buffer.from(secret.data[k], 'base64').toString();
    const token = `${dec('token-id')}.${dec('token-secret')}`;
    expect(token).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    const [header, , sig] = info.data[`jws-kubeconfig-${dec('token-id')}`].split('.');
    const expected = createHmac('sha256', token)
      .update(`${header}.${Buffer.from(info.data.kubeconfig).toString('base64url')}`)
      .digest('base64url');
    expect(sig).toBe(expected);
  });
});

// ---------------------------------------------------------------------------------------------
// Trap evidence: one check per README row; the key sets must match.

const evidence: Record<string, () => Promise<void> | void> = {
  'san-loopback': async () => {
    const cert = new x509.X509Certificate(await text('pki/apiserver.crt'));
    const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
    const names = (san?.names.toJSON() ?? []).map((n) => n.value);
    expect(names).not.toContain('127.0.0.1');
    expect(names).not.toContain('localhost');
    expect(names).toEqual(expect.arrayContaining(['k8s-api.lab.example', '10.96.0.1', '10.20.0.11', 'cp-1']));
  },
  oidc: async () => {
    const cc = await clusterConfiguration();
    const args = new Map<string, string>(cc.apiServer.extraArgs.map((a: Any) => [a.name, a.value]));
    for (const name of ['oidc-issuer-url', 'oidc-client-id', 'oidc-username-claim', 'oidc-groups-claim']) {
      expect(args.get(name), name).toBeTruthy();
      for (const cp of CONTROL_PLANES) {
        expect(flagsOf(await manifest(cp.name, 'kube-apiserver')).get(name)).toEqual([args.get(name)]);
      }
    }
  },
  'extra-args': async () => {
    const cc = await clusterConfiguration();
    const names = cc.apiServer.extraArgs.map((a: Any) => a.name);
    expect(names).toEqual(
      expect.arrayContaining(['audit-log-path', 'audit-policy-file', 'encryption-provider-config']),
    );
    expect(cc.apiServer.extraVolumes.map((v: Any) => v.hostPath)).toContain('/etc/kubernetes/audit');
    expect(cc.controllerManager.extraArgs).toContainEqual({ name: 'bind-address', value: '0.0.0.0' });
    expect(cc.etcd.local.extraArgs).toContainEqual({
      name: 'listen-metrics-urls',
      value: 'http://0.0.0.0:2381',
    });
    const kcm = flagsOf(await manifest('cp-1', 'kube-controller-manager'));
    expect(kcm.get('bind-address')).toEqual(['0.0.0.0']);
  },
  'sa-issuer': async () => {
    for (const cp of CONTROL_PLANES) {
      const api = flagsOf(await manifest(cp.name, 'kube-apiserver'));
      expect(api.get('service-account-issuer')).toEqual(['https://kubernetes.default.svc.cluster.local']);
    }
  },
  'encryption-key-name': async () => {
    const doc = parse(await text('encryption-config.yaml'));
    expect(doc.kind).toBe('EncryptionConfiguration');
    const providers = doc.resources[0].providers;
    expect(doc.resources[0].resources).toEqual(['secrets']);
    const key = providers[0].aescbc.keys[0];
    expect(key.name).toBe('key-2023');
    expect(key.name).not.toBe('key1');
    expect(Buffer.from(key.secret, 'base64')).toHaveLength(32);
    expect(providers[1]).toEqual({ identity: {} });
    const api = flagsOf(await manifest('cp-2', 'kube-apiserver'));
    expect(api.get('encryption-provider-config')).toEqual([CLUSTER.encryptionConfigPath]);
  },
  'anonymous-health': async () => {
    const anonymous = (b: Any) =>
      (b.subjects ?? []).some(
        (s: Any) => s.name === 'system:anonymous' || s.name === 'system:unauthenticated',
      );
    const lb = find('ClusterRoleBinding', 'lb-healthcheck');
    expect(anonymous(lb)).toBe(true);
    expect(anonymous(find('ClusterRoleBinding', 'system:public-info-viewer'))).toBe(true);
    const role = find('ClusterRole', lb.roleRef.name);
    expect(role.rules[0].nonResourceURLs).toContain('/healthz');
    const events = (await text('audit.log'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const checks = events.filter(
      (e) =>
        e.user.username === 'system:anonymous' &&
        e.requestURI === '/healthz' &&
        e.userAgent === 'haproxy-healthcheck',
    );
    expect(checks.length).toBeGreaterThan(5);
    expect(new Set(checks.flatMap((e) => e.sourceIPs))).toEqual(
      new Set(CLUSTER.loadBalancers.map((l) => l.ip)),
    );
    for (const cp of CONTROL_PLANES) {
      expect(flagsOf(await manifest(cp.name, 'kube-apiserver')).has('anonymous-auth')).toBe(false);
    }
  },
  'hostpath-cacert': () => {
    const ds = find('DaemonSet', 'csi-cinder-nodeplugin', 'kube-system');
    const vol = ds.spec.template.spec.volumes.find((v: Any) => v.hostPath?.path === '/etc/cacert');
    expect(vol).toBeDefined();
    const mounts = ds.spec.template.spec.containers.flatMap((c: Any) => c.volumeMounts ?? []);
    expect(mounts.map((m: Any) => m.name)).toContain(vol.name);
    expect(find('CSIDriver', 'cinder.csi.openstack.org')).toBeDefined();
    expect(
      ofKind('Pod').filter((p) => p.metadata.ownerReferences?.[0]?.uid === ds.metadata.uid),
    ).toHaveLength(NODES.length);
  },
  'hostpath-cloud-conf': () => {
    const d = find('Deployment', 'csi-cinder-controllerplugin', 'kube-system');
    const vol = d.spec.template.spec.volumes.find(
      (v: Any) => v.hostPath?.path === '/etc/kubernetes/cloud.conf',
    );
    expect(vol).toBeDefined();
    const mounts = d.spec.template.spec.containers.flatMap((c: Any) => c.volumeMounts ?? []);
    expect(mounts.map((m: Any) => m.name)).toContain(vol.name);
    expect(ofKind('Pod').some((p) => p.metadata.name.startsWith('csi-cinder-controllerplugin-'))).toBe(true);
  },
  'cp-schedulable': async () => {
    const cps = new Set(CONTROL_PLANES.map((c) => c.name));
    for (const cp of cps) {
      const taints = find('Node', cp).spec.taints ?? [];
      expect(taints.filter((t: Any) => t.key === 'node-role.kubernetes.io/control-plane')).toEqual([]);
    }
    const workloadOnCp = ofKind('Pod').filter(
      (p) =>
        cps.has(p.spec.nodeName) &&
        p.metadata.namespace !== 'kube-system' &&
        p.metadata.ownerReferences?.[0]?.kind === 'ReplicaSet',
    );
    expect(workloadOnCp.length).toBeGreaterThan(0);
    const init = (await yamlDocs('kubeadm-config.yaml')).find((d) => d.kind === 'InitConfiguration');
    expect(init.nodeRegistration.taints).toEqual([]);
  },
  'single-replica': () => {
    const wiki = find('Deployment', 'wiki', 'apps');
    expect(wiki.spec.replicas).toBe(1);
    const podLabels = wiki.spec.template.metadata.labels;
    const covering = ofKind('PodDisruptionBudget').filter(
      (p) => p.metadata.namespace === 'apps' && selects(p.spec.selector.matchLabels, podLabels),
    );
    expect(covering).toEqual([]);
  },
  'pdb-blocking': () => {
    const pdb = find('PodDisruptionBudget', 'checkout', 'shop');
    const deployment = find('Deployment', 'checkout', 'shop');
    expect(pdb.spec.minAvailable).toBe(deployment.spec.replicas);
    expect(pdb.status.disruptionsAllowed).toBe(0);
    const pods = ofKind('Pod').filter(
      (p) => p.metadata.namespace === 'shop' && selects(pdb.spec.selector.matchLabels, p.metadata.labels),
    );
    expect(pods).toHaveLength(pdb.spec.minAvailable);
  },
  'cilium-update-strategy': () => {
    const ds = find('DaemonSet', 'cilium', 'kube-system');
    expect(ds.spec.updateStrategy.type).toBe('RollingUpdate');
    expect(ds.spec.updateStrategy.rollingUpdate.maxUnavailable).toBe(2);
  },
  'cilium-values': () => {
    const ds = find('DaemonSet', 'cilium', 'kube-system');
    const agent = ds.spec.template.spec.containers.find((c: Any) => c.name === 'cilium-agent');
    expect(agent.securityContext.capabilities.add).toContain('SYS_MODULE');
    expect(ds.spec.template.spec.initContainers.map((c: Any) => c.name)).toContain('mount-cgroup');
    const cfg = find('ConfigMap', 'cilium-config', 'kube-system').data;
    expect(cfg['cgroup-root']).toBe('/run/cilium/cgroupv2');
    expect(`${cfg['k8s-service-host']}:${cfg['k8s-service-port']}`).toBe('k8s-api.lab.example:6443');
  },
  'kube-proxy-replacement': async () => {
    expect(find('ConfigMap', 'cilium-config', 'kube-system').data['kube-proxy-replacement']).toBe('true');
    expect(ofKind('DaemonSet').map((d) => d.metadata.name)).not.toContain('kube-proxy');
    expect(ofKind('DaemonSet').map((d) => d.metadata.name)).toContain('cilium');
    const docs = await yamlDocs('kubeadm-config.yaml');
    expect(docs.map((d) => d.kind)).not.toContain('KubeProxyConfiguration');
    expect((await clusterConfiguration()).proxy).toEqual({ disabled: true });
  },
  'coredns-custom': () => {
    const corefile: string = find('ConfigMap', 'coredns', 'kube-system').data.Corefile;
    expect(corefile).toContain('kubernetes cluster.local in-addr.arpa ip6.arpa');
    expect(corefile).toMatch(/^lab\.example:53 \{/m);
  },
  'etcd-version': async () => {
    const version = JSON.parse(await text('etcd/version.json'));
    expect(semverLess(version.etcdserver, '3.5.26')).toBe(true);
    expect(version.etcdserver.startsWith('3.5.')).toBe(true);
    for (const s of JSON.parse(await text('etcd/endpoint-status.json')))
      expect(s.Status.version).toBe(version.etcdserver);
    for (const cp of CONTROL_PLANES) {
      expect((await manifest(cp.name, 'etcd')).spec.containers[0].image).toBe(
        `registry.k8s.io/etcd:${version.etcdserver}-0`,
      );
    }
  },
  'bootstrap-token': () => {
    const secret = find('Secret', 'bootstrap-token-abcdef', 'kube-system');
    expect(secret.type).toBe('bootstrap.kubernetes.io/token');
    const dec = (k: string) => Buffer.from(secret.data[k], 'base64').toString();
    expect(Number.isNaN(Date.parse(dec('expiration')))).toBe(false);
    expect(dec('auth-extra-groups')).toBe('system:bootstrappers:kubeadm:default-node-token');
    expect(`bootstrap-token-${dec('token-id')}`).toBe(secret.metadata.name);
  },
  'kubelet-config': () => {
    const kubelet = parse(find('ConfigMap', 'kubelet-config', 'kube-system').data.kubelet);
    expect(kubelet.maxPods).toBe(150);
    expect(kubelet.systemReserved).toEqual({ cpu: '250m', memory: '1Gi' });
    expect(kubelet.kubeReserved).toBeDefined();
    expect(kubelet.evictionHard).toBeDefined();
  },
  'node-labels': () => {
    const sts = find('StatefulSet', 'postgres', 'shop');
    const selector = sts.spec.template.spec.nodeSelector;
    expect(selector).toEqual({ 'lab.example/pool': 'data' });
    const pool = ofKind('Node').filter((n) => selects(selector, n.metadata.labels));
    expect(pool).toHaveLength(sts.spec.replicas);
    const pods = ofKind('Pod').filter((p) => p.metadata.ownerReferences?.[0]?.uid === sts.metadata.uid);
    expect(new Set(pods.map((p) => p.spec.nodeName))).toEqual(new Set(pool.map((n) => n.metadata.name)));
  },
  'bare-pod': () => {
    const pod = find('Pod', 'netshoot', 'default');
    expect(pod.metadata.ownerReferences).toBeUndefined();
    expect(pod.spec.containers[0].securityContext.capabilities.add).toContain('NET_ADMIN');
    const ns = find('Namespace', 'default');
    expect(ns.metadata.labels['pod-security.kubernetes.io/enforce']).toBeUndefined();
  },
};

describe('examples/lab-cluster traps', () => {
  it('has one evidence check per documented trap', () => {
    expect(Object.keys(evidence).sort()).toEqual(TRAPS.map((t) => t.key).sort());
  });

  it.each(TRAPS.map((t) => [t.key, t] as const))('trap %s: the evidence is in the files', async (key) => {
    const check = evidence[key];
    expect(check).toBeDefined();
    await check?.();
  });

  it('documents every trap in the README with its location, rule ids and fix', async () => {
    const md = await text('README.md');
    const files = await listFiles(out);
    TRAPS.forEach((t, i) => {
      const row = md.split('\n').find((l) => l.startsWith(`| ${i + 1} | `));
      expect(row, t.key).toBeDefined();
      for (const id of t.ruleIds) {
        expect(id).toMatch(/^[a-z]+\.[a-z0-9-]+$/);
        expect(row).toContain(`\`${id}\``);
      }
      // Every file a row points at exists (manifests/cp-*/ means each control plane).
      for (const [, path] of t.where
        .join(' ')
        .matchAll(/`((?:pki|resources|manifests|etcd)\/[^`]+|[a-z-]+\.(?:yaml|log))`/g)) {
        const expanded = path?.includes('cp-*')
          ? CONTROL_PLANES.map((c) => path.replace('cp-*', c.name))
          : [path];
        for (const p of expanded) expect(files, `${t.key}: ${p}`).toContain(p);
      }
    });
  });
});
