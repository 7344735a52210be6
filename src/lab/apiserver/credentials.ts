/**
 * TLS material and kubeconfigs for the lab API server, issued from the cluster CA the way kubeadm
 * issues them: a serving certificate with the apiserver SANs, and client certificates whose CN is
 * the user and O the groups (x509 client-certificate authentication).
 */
import { stringify } from 'yaml';
import { type Issued, issueCertificate } from '../../pki/forge.js';
import { writeFileAtomic } from '../../util/atomic-write.js';

/** The serving certificate's SANs kubeadm always adds, plus the instance's own addresses. */
export async function issueServingCert(
  ca: Issued,
  sans: { ipAddresses: string[]; dnsNames?: string[] },
): Promise<Issued> {
  return issueCertificate({
    issuer: ca,
    commonName: 'kube-apiserver',
    usage: 'server',
    key: { algorithm: 'ECDSA', curve: 'P-256' },
    dnsNames: [
      ...new Set([
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        'kubernetes.default.svc.cluster.local',
        'localhost',
        ...(sans.dnsNames ?? []),
      ]),
    ],
    ipAddresses: [...new Set(['127.0.0.1', '10.96.0.1', ...sans.ipAddresses])],
  });
}

/** A client certificate: CN = user name, O = groups (kubeadm's admin is kubernetes-admin / kubeadm:cluster-admins). */
export async function issueClientCert(ca: Issued, user: string, groups: string[] = []): Promise<Issued> {
  return issueCertificate({
    issuer: ca,
    commonName: user,
    organization: groups,
    usage: 'client',
    key: { algorithm: 'ECDSA', curve: 'P-256' },
  });
}

export type KubeconfigInput = {
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  clusterName?: string;
  userName?: string;
};

/** A kubeconfig with embedded client-certificate credentials: it holds a private key. */
export function renderKubeconfig(k: KubeconfigInput): string {
  const cluster = k.clusterName ?? 'lab';
  const user = k.userName ?? 'lab-admin';
  const context = `${user}@${cluster}`;
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: k.server, 'certificate-authority-data': b64(k.caPem) } }],
    users: [
      { name: user, user: { 'client-certificate-data': b64(k.certPem), 'client-key-data': b64(k.keyPem) } },
    ],
    contexts: [{ name: context, context: { cluster, user } }],
    'current-context': context,
    preferences: {},
  });
}

/** Writes a kubeconfig atomically with mode 0600 (it carries a private key). */
export async function writeKubeconfig(path: string, k: KubeconfigInput): Promise<void> {
  await writeFileAtomic(path, renderKubeconfig(k), { mode: 0o600 });
}
