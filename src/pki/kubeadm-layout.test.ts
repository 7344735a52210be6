import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeEtcdMemberCerts, writeKubeadmPki } from './kubeadm-layout.js';

let root: string;
let dir: string;
let files: string[];

const read = (p: string) => readFile(join(dir, p), 'utf8');
const cert = async (p: string) => new X509Certificate(await read(p));

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ferry-kubeadm-pki-'));
  dir = join(root, 'pki');
  ({ files } = await writeKubeadmPki(dir, {
    apiserver: {
      nodeName: 'cp-1',
      advertiseAddress: '10.0.0.11',
      dnsNames: ['kubernetes', 'kubernetes.default'],
      ipAddresses: ['10.96.0.1'],
    },
    etcdMembers: [
      { name: 'cp-1', ip: '10.0.0.11' },
      { name: 'cp-2', ip: '10.0.0.12' },
    ],
  }));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('writeKubeadmPki', () => {
  it('writes the kubeadm file set with kubeadm modes', async () => {
    expect(files).toEqual(
      [
        'apiserver-etcd-client.crt',
        'apiserver-etcd-client.key',
        'apiserver-kubelet-client.crt',
        'apiserver-kubelet-client.key',
        'apiserver.crt',
        'apiserver.key',
        'ca.crt',
        'ca.key',
        'etcd/ca.crt',
        'etcd/ca.key',
        'etcd/healthcheck-client.crt',
        'etcd/healthcheck-client.key',
        'etcd/peer.crt',
        'etcd/peer.key',
        'etcd/server.crt',
        'etcd/server.key',
        'front-proxy-ca.crt',
        'front-proxy-ca.key',
        'front-proxy-client.crt',
        'front-proxy-client.key',
        'sa.key',
        'sa.pub',
      ].sort(),
    );
    for (const f of files) {
      const mode = (await stat(join(dir, f))).mode & 0o777;
      if (f.endsWith('.key')) {
        expect(mode, f).toBe(0o600);
        expect(await read(f)).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
      } else {
        // 0644 less whatever the umask removes: never writable or executable by others.
        expect(mode & ~0o644, f).toBe(0);
        expect(mode & 0o400, f).toBe(0o400);
      }
    }
  });

  it('chains every leaf to the right CA, each key matching its certificate', async () => {
    const chains: [string, string, string][] = [
      ['apiserver', 'ca', 'CN=kube-apiserver'],
      ['apiserver-kubelet-client', 'ca', 'O=system:masters\nCN=kube-apiserver-kubelet-client'],
      ['apiserver-etcd-client', 'etcd/ca', 'CN=kube-apiserver-etcd-client'],
      ['front-proxy-client', 'front-proxy-ca', 'CN=front-proxy-client'],
      ['etcd/server', 'etcd/ca', 'CN=cp-1'],
      ['etcd/peer', 'etcd/ca', 'CN=cp-1'],
      ['etcd/healthcheck-client', 'etcd/ca', 'CN=kube-etcd-healthcheck-client'],
    ];
    for (const [leaf, ca, subject] of chains) {
      const l = await cert(`${leaf}.crt`);
      const c = await cert(`${ca}.crt`);
      expect(l.subject, leaf).toBe(subject);
      expect(l.ca).toBe(false);
      expect(l.checkIssued(c), leaf).toBe(true);
      expect(l.verify(c.publicKey), leaf).toBe(true);
      expect(l.checkPrivateKey(createPrivateKey(await read(`${leaf}.key`))), leaf).toBe(true);
    }
    for (const [ca, cn] of [
      ['ca', 'kubernetes'],
      ['front-proxy-ca', 'front-proxy-ca'],
      ['etcd/ca', 'etcd-ca'],
    ]) {
      const c = await cert(`${ca}.crt`);
      expect(c.ca).toBe(true);
      expect(c.subject).toBe(`CN=${cn}`);
      expect(c.verify(c.publicKey)).toBe(true);
      expect(c.checkPrivateKey(createPrivateKey(await read(`${ca}.key`)))).toBe(true);
    }
    // Three distinct CAs, not one key reused.
    const cas = await Promise.all(['ca.crt', 'front-proxy-ca.crt', 'etcd/ca.crt'].map(cert));
    expect(new Set(cas.map((c) => c.fingerprint256)).size).toBe(3);
    expect((await cert('apiserver.crt')).verify(cas[2]!.publicKey)).toBe(false);
  });

  it('puts exactly the given SANs on the apiserver and kubeadm SANs on etcd', async () => {
    expect((await cert('apiserver.crt')).subjectAltName).toBe(
      'DNS:cp-1, DNS:kubernetes, DNS:kubernetes.default, IP Address:10.0.0.11, IP Address:10.96.0.1',
    );
    for (const f of ['etcd/server.crt', 'etcd/peer.crt']) {
      const c = await cert(f);
      expect(c.subjectAltName).toBe(
        'DNS:cp-1, DNS:localhost, IP Address:10.0.0.11, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
      );
      expect(c.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    }
    expect((await cert('apiserver.crt')).keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect((await cert('front-proxy-client.crt')).keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
  });

  it('writes a matching sa.key / sa.pub pair', async () => {
    const pub = await read('sa.pub');
    expect(pub).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    const derived = createPublicKey(createPrivateKey(await read('sa.key'))).export({
      type: 'spki',
      format: 'pem',
    });
    expect(derived).toBe(pub);
  });

  it('issues certificates for another etcd member from etcd/ca', async () => {
    const out = await writeEtcdMemberCerts(dir, { name: 'cp-2', ip: '10.0.0.12' }, join(dir, 'etcd'));
    expect(out.certFile).toBe(join(dir, 'etcd', 'server-cp-2.crt'));
    const etcdCa = await cert('etcd/ca.crt');
    for (const [c, k] of [
      [out.certFile, out.keyFile],
      [out.peerCertFile, out.peerKeyFile],
    ] as const) {
      const x = new X509Certificate(await readFile(c, 'utf8'));
      expect(x.subject).toBe('CN=cp-2');
      expect(x.verify(etcdCa.publicKey)).toBe(true);
      expect(x.subjectAltName).toContain('IP Address:10.0.0.12');
      expect(x.checkPrivateKey(createPrivateKey(await readFile(k, 'utf8')))).toBe(true);
      expect((await stat(k)).mode & 0o777).toBe(0o600);
    }
    await expect(writeEtcdMemberCerts(dir, { name: '../x', ip: '10.0.0.13' }, dir)).rejects.toThrow(
      /file name/,
    );
  });

  it('issues ECDSA material when asked (kubeadm encryptionAlgorithm)', async () => {
    const other = await mkdtemp(join(tmpdir(), 'ferry-kubeadm-pki-ec-'));
    try {
      await writeKubeadmPki(other, {
        apiserver: { nodeName: 'n', advertiseAddress: '10.0.0.1', dnsNames: [], ipAddresses: [] },
        etcdMembers: [],
        key: { algorithm: 'ECDSA' },
        serviceAccountKey: { algorithm: 'Ed25519' },
        validityDays: 30,
      });
      expect(await readFile(join(other, 'ca.key'), 'utf8')).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
      expect(await readFile(join(other, 'sa.key'), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      const api = new X509Certificate(await readFile(join(other, 'apiserver.crt'), 'utf8'));
      const days = (new Date(api.validTo).getTime() - Date.now()) / 86_400_000;
      expect(Math.round(days)).toBe(30);
      await expect(stat(join(other, 'etcd', 'server.crt'))).rejects.toThrow();
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});
