import { generateKeyPairSync } from 'node:crypto';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { VERSION } from '../version.js';
import { loadSnapshot } from './load.js';
import { SNAPSHOT_FORMAT_VERSION } from './model.js';
import { type FilesCluster, makeFilesCluster } from './testing-files-cluster.js';

async function rejected(p: Promise<unknown>): Promise<FerryError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(FerryError);
    expect((e as FerryError).exitCode).toBe(2);
    expect((e as FerryError).remediation).toBeTruthy();
    return e as FerryError;
  }
  throw new Error('expected loadSnapshot to fail');
}

const NOW = new Date('2025-03-01T12:00:00Z');

describe('loadSnapshot from a files directory', () => {
  let fx: FilesCluster;
  beforeEach(async () => {
    fx = await makeFilesCluster();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  it('assembles every part with provenance', async () => {
    const s = await loadSnapshot(fx.dir, { now: NOW });
    const p = (...rel: string[]) => join(fx.dir, ...rel);

    expect(s.manifest).toEqual({
      formatVersion: SNAPSHOT_FORMAT_VERSION,
      createdAt: '2025-03-01T12:00:00.000Z',
      source: { kind: 'files', path: fx.dir },
      ferryVersion: VERSION,
      parts: [
        'kubeadm',
        'flags',
        'kubelet',
        'kube-proxy',
        'pki',
        'encryption',
        'etcd',
        'resources',
        'served-certs',
        'audit-log',
      ],
      warnings: [
        'resources: ignored objects ferry does not read (1 Secret, 1 Certificate); Secrets other than bootstrap tokens are never kept',
        `KubeletConfiguration in ${p('kubeadm-config.yaml')}:67 differs from ConfigMap kube-system/kubelet-config data.kubelet; using the ConfigMap, which is what the nodes run with`,
        `KubeProxyConfiguration in ${p('kubeadm-config.yaml')}:74 differs from ConfigMap kube-system/kube-proxy data.config.conf; using the ConfigMap, which is what the nodes run with`,
        `${p('audit.log')}: skipped 1 line(s) that are not audit events`,
      ],
    });

    // kubeadm-config.yaml wins over the ConfigMap copies.
    const cc = s.kubeadm.clusterConfiguration!;
    expect(cc.source).toEqual({ kind: 'file', path: p('kubeadm-config.yaml'), line: 19 });
    expect(
      cc.apiServer.extraArgs.filter((f) => f.name === 'service-account-issuer').map((f) => f.value),
    ).toEqual(['https://kubernetes.default.svc.cluster.local', 'https://k8s.example.internal']);
    expect(cc.unknownFields).toEqual(['proxy']);
    expect(s.kubeadm.nodeConfigurations[0]).toMatchObject({
      kind: 'InitConfiguration',
      bootstrapTokenIds: ['abcdef'],
    });
    // The uploaded ConfigMap is what kubelets run with, so it wins over the kubeadm-config.yaml copy.
    expect(s.kubelet?.source).toMatchObject({
      kind: 'object',
      objectKind: 'ConfigMap',
      name: 'kubelet-config',
    });
    expect(s.kubeProxy?.spec.mode).toBe('iptables');
    expect(s.manifest.warnings.join('\n')).toMatch(
      /KubeProxyConfiguration in .* differs from ConfigMap kube-system\/kube-proxy/,
    );

    expect(s.staticPods.map((sp) => [sp.node, sp.component, sp.source])).toEqual([
      ['cp-1', 'etcd', { kind: 'file', path: p('manifests', 'cp-1', 'etcd.yaml'), line: 1 }],
      [
        'cp-1',
        'kube-apiserver',
        { kind: 'file', path: p('manifests', 'cp-1', 'kube-apiserver.yaml'), line: 1 },
      ],
      [
        'cp-2',
        'kube-apiserver',
        { kind: 'file', path: p('manifests', 'cp-2', 'kube-apiserver.yaml'), line: 1 },
      ],
    ]);

    const r = s.resources;
    expect(r.nodes.map((n) => n.metadata.name)).toEqual(['cp-1', 'cp-2', 'worker-1']);
    expect(r.nodes[0]?.metadata.managedFields).toBeUndefined();
    expect(r.pods.map((x) => x.metadata.name)).toEqual(['kube-apiserver-cp-1', 'coredns-7c65d6cfc9-x2k4q']);
    expect(r.configmaps.map((c) => c.metadata.name)).toEqual([
      'kubeadm-config',
      'kubelet-config',
      'kube-proxy',
      'cilium-config',
    ]);
    expect(r.anonymousBindings.map((b) => b.metadata.name)).toEqual(['healthz-anonymous']);
    expect(r.deployments[0]?.metadata.annotations).toEqual({ 'deployment.kubernetes.io/revision': '3' });
    expect(r.bootstrapTokens).toMatchObject([{ id: 'abcdef', expiration: '2030-01-01T00:00:00Z' }]);
    expect(r.poddisruptionbudgets.length).toBe(1);
    expect(r.daemonsets.length).toBe(1);
    expect(r.services.length).toBe(1);

    expect(s.etcd?.members.map((m) => m.id)).toEqual([
      '10276657743932975437',
      '17115582512862521359',
      '2043521781664572000',
    ]);
    expect(s.etcd?.endpoints[0]?.leaderId).toBe('17115582512862521359');
    expect(s.etcd?.alarms).toEqual([{ memberId: '17115582512862521359', alarm: 'NOSPACE' }]);
    expect(s.encryption?.resources[0]?.providers.map((x) => [x.type, x.keyNames])).toEqual([
      ['aescbc', ['secrets-2024', 'secrets-2023']],
      ['identity', []],
    ]);
    expect(s.auditLog?.anonymous.map((a) => [a.path, a.count])).toEqual([
      ['/healthz', 2],
      ['/version', 1],
    ]);
    expect(s.pki?.certificates.some((c) => c.path === 'apiserver.crt')).toBe(true);
    expect(s.servedCertificates.map((c) => [c.address, c.role, c.node, c.certificate?.subject])).toEqual([
      ['10.0.0.11:6443', 'control-plane', 'cp-1', 'CN=kube-apiserver'],
      ['k8s.example.internal:6443', 'endpoint', undefined, 'CN=kube-apiserver'],
    ]);

    // Nothing secret made it in.
    const all = JSON.stringify(s);
    for (const secret of ['0123456789abcdef', 'MDEyMzQ1Njc4OWFi', 'aHVudGVyMg', 'hunter2', 'PRIVATE KEY']) {
      expect(all).not.toContain(secret);
    }
  });

  it('falls back on ConfigMaps and mirror pods when the files are absent', async () => {
    await rm(join(fx.dir, 'kubeadm-config.yaml'));
    await rm(join(fx.dir, 'manifests'), { recursive: true });
    const s = await loadSnapshot(fx.dir, { now: NOW });
    expect(s.kubeadm.clusterConfiguration?.source).toEqual({
      kind: 'object',
      objectKind: 'ConfigMap',
      namespace: 'kube-system',
      name: 'kubeadm-config',
      field: 'data.ClusterConfiguration',
    });
    expect(s.kubeadm.clusterConfiguration?.networking.podSubnet).toBe('10.244.0.0/16');
    expect(s.kubelet?.source).toMatchObject({
      objectKind: 'ConfigMap',
      name: 'kubelet-config',
      field: 'data.kubelet',
    });
    expect(s.kubeProxy?.spec.mode).toBe('iptables');
    expect(s.staticPods).toHaveLength(1);
    expect(s.staticPods[0]).toMatchObject({
      component: 'kube-apiserver',
      node: 'cp-1',
      flags: expect.arrayContaining([
        { name: 'anonymous-auth', value: 'true' },
        { name: 'audit-log-path', value: '/var/log/kubernetes/audit.log' },
      ]),
      source: { kind: 'object', objectKind: 'Pod', namespace: 'kube-system', name: 'kube-apiserver-cp-1' },
    });
    expect(s.manifest.parts).toContain('flags');
    expect(s.manifest.parts).toContain('kubeadm');
  });

  it('adds mirror pods for control planes whose manifests were not copied', async () => {
    await rm(join(fx.dir, 'manifests', 'cp-1'), { recursive: true });
    const s = await loadSnapshot(fx.dir, { now: NOW });
    expect(s.staticPods.map((sp) => [sp.node, sp.component, sp.source.kind])).toEqual([
      ['cp-2', 'kube-apiserver', 'file'],
      ['cp-1', 'kube-apiserver', 'object'],
    ]);
  });

  it('accepts a directory with only manifests/*.yaml (no node folders)', async () => {
    const only = join(fx.tmp, 'only');
    await mkdir(join(only, 'manifests'), { recursive: true });
    await writeFile(
      join(only, 'manifests', 'kube-scheduler.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-scheduler\n  labels: {component: kube-scheduler}\nspec:\n  containers:\n  - name: kube-scheduler\n    command: [kube-scheduler, --bind-address=127.0.0.1]\n',
    );
    await writeFile(join(only, 'manifests', 'notes.txt'), 'copied on monday');
    const s = await loadSnapshot(only, { now: NOW });
    expect(s.manifest.parts).toEqual(['flags']);
    expect(s.staticPods[0]?.node).toBeUndefined();
    expect(s.manifest.warnings).toEqual([
      `ignored ${join(only, 'manifests', 'notes.txt')}: not a .yaml, .yml or .json file`,
    ]);
    expect(s.pki).toBeUndefined();
  });

  it('records paths as given and reads them relative to cwd', async () => {
    // "cluster" does not exist in the test's own working directory: only cwd makes it readable.
    const s = await loadSnapshot('cluster', { now: NOW, cwd: fx.tmp });
    const p = (...rel: string[]) => join('cluster', ...rel);
    expect(s.manifest.source).toEqual({ kind: 'files', path: 'cluster' });
    expect(s.kubeadm.clusterConfiguration?.source).toEqual({
      kind: 'file',
      path: p('kubeadm-config.yaml'),
      line: 19,
    });
    expect(s.staticPods[0]?.source).toEqual({
      kind: 'file',
      path: p('manifests', 'cp-1', 'etcd.yaml'),
      line: 1,
    });
    expect(s.pki?.root).toBe(p('pki'));
    expect(s.pki?.certificates.length).toBeGreaterThan(5);
    expect(s.etcd?.source).toEqual({ kind: 'file', path: p('etcd') });
    expect(s.encryption?.source).toMatchObject({ kind: 'file', path: p('encryption-config.yaml') });
    expect(s.auditLog?.source).toEqual({ kind: 'file', path: p('audit.log') });
    expect(s.servedCertificates.map((c) => c.certificate?.path)).toEqual([
      p('served-certs', '10.0.0.11_6443.pem'),
      p('served-certs', 'endpoint_6443.pem'),
    ]);
    expect(s.manifest.warnings).toContain(`${p('audit.log')}: skipped 1 line(s) that are not audit events`);
    // Nothing recorded says where the directory was on this machine; the content is the same.
    expect(JSON.stringify(s)).not.toContain(fx.tmp);
    const absolute = await loadSnapshot(fx.dir, { now: NOW });
    expect(s.resources).toEqual(absolute.resources);
    expect(s.etcd?.members).toEqual(absolute.etcd?.members);
  });

  it('names a bad file as given when reading relative to cwd', async () => {
    await writeFile(join(fx.dir, 'manifests', 'cp-2', 'kube-apiserver.yaml'), 'kind: Pod\n labels: {}\n');
    const e = await rejected(loadSnapshot('cluster', { cwd: fx.tmp }));
    expect(e.location?.file).toBe(join('cluster', 'manifests', 'cp-2', 'kube-apiserver.yaml'));
  });
});

describe('loadSnapshot: bad input (exit 2, file, position, remedy; nothing written)', () => {
  let fx: FilesCluster;
  beforeEach(async () => {
    fx = await makeFilesCluster();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  const listing = async () => (await readdir(fx.tmp, { recursive: true })).sort();

  it('a missing directory', async () => {
    const e = await rejected(loadSnapshot(join(fx.tmp, 'nope')));
    expect(e.message).toContain('does not exist');
    expect(e.location?.file).toBe(join(fx.tmp, 'nope'));
  });

  it('a file instead of a directory', async () => {
    const e = await rejected(loadSnapshot(join(fx.dir, 'audit.log')));
    expect(e.message).toContain('is not a directory');
  });

  it('a directory with none of the expected parts', async () => {
    const empty = join(fx.tmp, 'empty');
    await mkdir(join(empty, 'pki'), { recursive: true });
    const e = await rejected(loadSnapshot(empty));
    expect(e.message).toContain('none of kubeadm-config.yaml, manifests/, resources/');
    expect(e.remediation).toContain('docs/snapshot-layout.md');
  });

  it('malformed YAML in a manifest names file, line and column', async () => {
    const file = join(fx.dir, 'manifests', 'cp-2', 'kube-apiserver.yaml');
    await writeFile(file, 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n labels: {}\n');
    const before = await listing();
    const e = await rejected(loadSnapshot(fx.dir));
    expect(e.message).toMatch(/^malformed YAML/);
    expect(e.location).toMatchObject({ file, line: 5, column: 1 });
    expect(await listing()).toEqual(before);
  });

  it('an unknown kubeadm apiVersion', async () => {
    await writeFile(
      join(fx.dir, 'kubeadm-config.yaml'),
      'apiVersion: kubeadm.k8s.io/v1beta1\nkind: ClusterConfiguration\n',
    );
    const e = await rejected(loadSnapshot(fx.dir));
    expect(e.message).toContain('unsupported kubeadm apiVersion kubeadm.k8s.io/v1beta1');
    expect(e.location).toMatchObject({
      file: join(fx.dir, 'kubeadm-config.yaml'),
      line: 1,
      field: 'apiVersion',
    });
  });

  it('a wrong kind in manifests/', async () => {
    await writeFile(
      join(fx.dir, 'manifests', 'cp-1', 'extra.yaml'),
      'apiVersion: v1\nkind: Service\nmetadata: {name: x}\n',
    );
    const e = await rejected(loadSnapshot(fx.dir));
    expect(e.message).toContain('expected kind Pod');
    expect(e.location?.file).toBe(join(fx.dir, 'manifests', 'cp-1', 'extra.yaml'));
  });

  it('a resources file that is not a Kubernetes object or List', async () => {
    const file = join(fx.dir, 'resources', 'zz.yaml');
    await writeFile(file, 'apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\n---\njust: some\nmap: here\n');
    const e = await rejected(loadSnapshot(fx.dir));
    expect(e.message).toContain('not a Kubernetes object or List');
    expect(e.location).toMatchObject({ file, line: 5, field: 'kind' });
    await writeFile(
      file,
      '{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{}}]}',
    );
    const e2 = await rejected(loadSnapshot(fx.dir));
    expect(e2.location).toMatchObject({ file, field: 'items[0].metadata.name' });
  });

  it('malformed etcd JSON', async () => {
    const file = join(fx.dir, 'etcd', 'member-list.json');
    await writeFile(file, '{"members":[{"ID":10276657743932975437,\n"name":"cp-1",]}');
    const e = await rejected(loadSnapshot(fx.dir));
    expect(e.message).toMatch(/^malformed JSON/);
    expect(e.location).toMatchObject({ file, line: 2, column: 15 });
    expect(e.remediation).toContain('etcdctl member list -w json');
  });

  it('an encryption config with an unknown provider', async () => {
    const file = join(fx.dir, 'encryption-config.yaml');
    await writeFile(
      file,
      'apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - rot13: {}\n',
    );
    const e = await rejected(loadSnapshot(fx.dir));
    expect(e.message).toContain('unknown encryption provider rot13');
    expect(e.location).toMatchObject({ file, line: 6 });
  });

  it('a served certificate that is not PEM, or badly named', async () => {
    await writeFile(join(fx.dir, 'served-certs', '10.0.0.12_6443.pem'), 'hello');
    const e = await rejected(loadSnapshot(fx.dir));
    expect(e.location?.file).toBe(join(fx.dir, 'served-certs', '10.0.0.12_6443.pem'));
    await rm(join(fx.dir, 'served-certs', '10.0.0.12_6443.pem'));
    await writeFile(join(fx.dir, 'served-certs', 'apiserver.pem'), 'x');
    const e2 = await rejected(loadSnapshot(fx.dir));
    expect(e2.remediation).toContain('HOST_PORT.pem');
  });

  it('a truncated PKI directory fails unless strictPki is off', async () => {
    await rm(join(fx.dir, 'pki', 'ca.crt'));
    const e = await rejected(loadSnapshot(fx.dir));
    expect(e.location?.file).toBe(join(fx.dir, 'pki', 'ca.crt'));
    const s = await loadSnapshot(fx.dir, { strictPki: false });
    expect(s.pki?.certificates.some((c) => c.path === 'ca.crt')).toBe(false);
  });

  it('a key that does not match its certificate', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await writeFile(join(fx.dir, 'pki', 'apiserver.key'), privateKey.export({ type: 'sec1', format: 'pem' }));
    const e = await rejected(loadSnapshot(fx.dir));
    expect(e.location?.file).toBe(join(fx.dir, 'pki', 'apiserver.key'));
  });

  it('an encrypted private key', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' });
    await writeFile(join(fx.dir, 'pki', 'front-proxy-ca.key'), pem);
    const e = await rejected(loadSnapshot(fx.dir));
    expect(e.location?.file).toBe(join(fx.dir, 'pki', 'front-proxy-ca.key'));
    expect(e.message).toMatch(/encrypted/i);
  });

  it('a certificate that is not PEM in pki/', async () => {
    await writeFile(join(fx.dir, 'pki', 'front-proxy-client.crt'), 'not a certificate\n');
    const e = await rejected(loadSnapshot(fx.dir));
    expect(e.location?.file).toBe(join(fx.dir, 'pki', 'front-proxy-client.crt'));
  });
});
