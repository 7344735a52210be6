/**
 * Writes a PKI directory laid out as kubeadm writes /etc/kubernetes/pki, with real certificates:
 * the lab runs etcd members from it and tests/examples read it back as a cluster's PKI.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { usageError } from '../errors.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import {
  createCA,
  generateKeyPairPem,
  type Issued,
  issueCertificate,
  type KeySpec,
  loadIssued,
} from './forge.js';

export interface KubeadmPkiOptions {
  /** Accepted for symmetry with ClusterConfiguration; kubeadm does not put it in any certificate. */
  clusterName?: string;
  /**
   * The apiserver serving certificate's SANs are `nodeName` + `dnsNames` and `advertiseAddress` +
   * `ipAddresses`, nothing else (kubeadm would add kubernetes.default… and the service IP; callers
   * that want them pass them).
   */
  apiserver: { nodeName: string; advertiseAddress: string; dnsNames: string[]; ipAddresses: string[] };
  /** The first member gets etcd/server.* and etcd/peer.*; others get theirs from writeEtcdMemberCerts. */
  etcdMembers: { name: string; ip: string }[];
  /** sa.key algorithm; default RSA 2048. */
  serviceAccountKey?: KeySpec;
  /** Key algorithm for every CA and leaf (kubeadm `encryptionAlgorithm`); default RSA 2048. */
  key?: KeySpec;
  /** Leaf validity; CAs get kubeadm's 10 years. Default 365. */
  validityDays?: number;
}

const KEY_MODE = 0o600;
const CERT_MODE = 0o644;

type Pending = { path: string; data: string; mode: number };

function pair(base: string, issued: Issued): Pending[] {
  return [
    { path: `${base}.crt`, data: issued.certPem, mode: CERT_MODE },
    { path: `${base}.key`, data: issued.keyPem, mode: KEY_MODE },
  ];
}

function uniq(values: string[]): string[] {
  return [...new Set(values)];
}

/** kubeadm's etcd server/peer SANs: the member name, localhost, its IP, and both loopbacks. */
function etcdSans(member: { name: string; ip: string }): { dnsNames: string[]; ipAddresses: string[] } {
  return { dnsNames: uniq([member.name, 'localhost']), ipAddresses: uniq([member.ip, '127.0.0.1', '::1']) };
}

function checkMemberName(name: string): void {
  if (name === '' || name === '.' || name === '..' || /[/\\]/.test(name)) {
    throw usageError(`etcd member name "${name}" cannot be used in a file name`, 'use a plain host name');
  }
}

async function etcdMemberPair(
  etcdCa: Issued,
  member: { name: string; ip: string },
  key: KeySpec | undefined,
  validityDays: number | undefined,
): Promise<{ server: Issued; peer: Issued }> {
  const common = { issuer: etcdCa, commonName: member.name, usage: 'peer' as const, key, validityDays };
  // kubeadm gives both server and peer certificates serverAuth+clientAuth.
  const [server, peer] = await Promise.all([
    issueCertificate({ ...common, ...etcdSans(member) }),
    issueCertificate({ ...common, ...etcdSans(member) }),
  ]);
  return { server, peer };
}

/**
 * Writes ca, apiserver, apiserver-kubelet-client, apiserver-etcd-client, front-proxy-ca,
 * front-proxy-client, sa.key/sa.pub and etcd/{ca,server,peer,healthcheck-client} into `dir`.
 * Keys are 0600, certificates 0644, every file written atomically. Returns paths relative to `dir`.
 */
export async function writeKubeadmPki(dir: string, opts: KubeadmPkiOptions): Promise<{ files: string[] }> {
  const { key, validityDays } = opts;
  for (const m of opts.etcdMembers) checkMemberName(m.name);

  const [ca, frontProxyCa, etcdCa] = await Promise.all([
    createCA({ commonName: 'kubernetes', key }),
    createCA({ commonName: 'front-proxy-ca', key }),
    createCA({ commonName: 'etcd-ca', key }),
  ]);
  const leaf = { key, validityDays };
  const api = opts.apiserver;
  const [apiserver, kubeletClient, etcdClient, frontProxyClient, healthcheck, sa] = await Promise.all([
    issueCertificate({
      ...leaf,
      issuer: ca,
      commonName: 'kube-apiserver',
      usage: 'server',
      dnsNames: uniq([api.nodeName, ...api.dnsNames]),
      ipAddresses: uniq([api.advertiseAddress, ...api.ipAddresses]),
    }),
    issueCertificate({
      ...leaf,
      issuer: ca,
      commonName: 'kube-apiserver-kubelet-client',
      organization: ['system:masters'],
      usage: 'client',
    }),
    issueCertificate({ ...leaf, issuer: etcdCa, commonName: 'kube-apiserver-etcd-client', usage: 'client' }),
    issueCertificate({ ...leaf, issuer: frontProxyCa, commonName: 'front-proxy-client', usage: 'client' }),
    issueCertificate({
      ...leaf,
      issuer: etcdCa,
      commonName: 'kube-etcd-healthcheck-client',
      usage: 'client',
    }),
    generateKeyPairPem(opts.serviceAccountKey ?? { algorithm: 'RSA', size: 2048 }),
  ]);

  const pending: Pending[] = [
    ...pair('ca', ca),
    ...pair('apiserver', apiserver),
    ...pair('apiserver-kubelet-client', kubeletClient),
    ...pair('apiserver-etcd-client', etcdClient),
    ...pair('front-proxy-ca', frontProxyCa),
    ...pair('front-proxy-client', frontProxyClient),
    { path: 'sa.key', data: sa.privateKeyPem, mode: KEY_MODE },
    { path: 'sa.pub', data: sa.publicKeyPem, mode: CERT_MODE },
    ...pair('etcd/ca', etcdCa),
    ...pair('etcd/healthcheck-client', healthcheck),
  ];
  const first = opts.etcdMembers[0];
  if (first) {
    const { server, peer } = await etcdMemberPair(etcdCa, first, key, validityDays);
    pending.push(...pair('etcd/server', server), ...pair('etcd/peer', peer));
  }

  for (const f of pending) await writeFileAtomic(join(dir, f.path), f.data, { mode: f.mode });
  return { files: pending.map((f) => f.path).sort() };
}

/**
 * Issues a server and a peer certificate for another etcd member from `pkiDir`/etcd/ca.{crt,key},
 * written to `outDir` as server-NAME.{crt,key} and peer-NAME.{crt,key}. Returns absolute-or-as-given paths.
 */
export async function writeEtcdMemberCerts(
  pkiDir: string,
  member: { name: string; ip: string },
  outDir: string,
  opts: { key?: KeySpec; validityDays?: number } = {},
): Promise<{ certFile: string; keyFile: string; peerCertFile: string; peerKeyFile: string }> {
  checkMemberName(member.name);
  const [caPem, caKeyPem] = await Promise.all([
    readFile(join(pkiDir, 'etcd', 'ca.crt'), 'utf8'),
    readFile(join(pkiDir, 'etcd', 'ca.key'), 'utf8'),
  ]);
  const etcdCa = await loadIssued(caPem, caKeyPem);
  const { server, peer } = await etcdMemberPair(etcdCa, member, opts.key, opts.validityDays);
  const out = {
    certFile: join(outDir, `server-${member.name}.crt`),
    keyFile: join(outDir, `server-${member.name}.key`),
    peerCertFile: join(outDir, `peer-${member.name}.crt`),
    peerKeyFile: join(outDir, `peer-${member.name}.key`),
  };
  await writeFileAtomic(out.certFile, server.certPem, { mode: CERT_MODE });
  await writeFileAtomic(out.keyFile, server.keyPem, { mode: KEY_MODE });
  await writeFileAtomic(out.peerCertFile, peer.certPem, { mode: CERT_MODE });
  await writeFileAtomic(out.peerKeyFile, peer.keyPem, { mode: KEY_MODE });
  return out;
}
