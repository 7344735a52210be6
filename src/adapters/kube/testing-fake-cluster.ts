/**
 * The recorded cluster of src/adapters/kube/fixtures/kube-api, served for real: an HTTPS API server with
 * client-certificate auth, a second TLS server standing for control plane cp1's apiserver, a
 * closed port for cp2's, and an admin kubeconfig in a temp dir.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCA, type Issued, issueCertificate } from '../../pki/forge.js';
import {
  closedPort,
  type FakeKubeApi,
  kubeconfigYaml,
  startFakeKubeApi,
  startTlsServer,
} from './testing-fake-api.js';

/** The token secret in the recorded bootstrap-token Secret (data and last-applied annotation). */
export const RECORDED_TOKEN_SECRET = '7kq2xv9wz4n8m3p1';

export interface FakeCluster {
  dir: string;
  api: FakeKubeApi;
  kubeconfig: string;
  ca: Issued;
  endpointCert: Issued;
  cp1Cert: Issued;
  cp1Port: number;
  cp2Port: number;
  close(): Promise<void>;
}

export async function startFakeCluster(): Promise<FakeCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-fake-cluster-'));
  const ca = await createCA({ commonName: 'kubernetes' });
  const endpointCert = await issueCertificate({
    issuer: ca,
    commonName: 'kube-apiserver',
    dnsNames: [
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ],
    ipAddresses: ['10.96.0.1', '10.0.0.10', '127.0.0.1'],
    usage: 'server',
  });
  // cp1's own apiserver certificate, without 127.0.0.1 (a trap the audit looks for)
  const cp1Cert = await issueCertificate({
    issuer: ca,
    commonName: 'kube-apiserver',
    dnsNames: ['cp1', 'kubernetes', 'kubernetes.default.svc'],
    ipAddresses: ['10.96.0.1', '10.0.0.11'],
    usage: 'server',
  });
  const admin = await issueCertificate({
    issuer: ca,
    commonName: 'kubernetes-admin',
    organization: ['kubeadm:cluster-admins'],
    usage: 'client',
  });
  const cp1 = await startTlsServer(cp1Cert.certPem, cp1Cert.keyPem);
  const cp2Port = await closedPort();
  const api = await startFakeKubeApi({
    certPem: endpointCert.certPem,
    keyPem: endpointCert.keyPem,
    clientCaPem: ca.certPem,
    vars: { CP1_PORT: String(cp1.port), CLOSED_PORT: String(cp2Port) },
  });
  const kubeconfig = join(dir, 'admin.conf');
  writeFileSync(
    kubeconfig,
    kubeconfigYaml({
      server: api.url,
      caPem: ca.certPem,
      certPem: admin.certPem,
      keyPem: admin.keyPem,
      extraContexts: ['staging-admin'],
    }),
    { mode: 0o600 },
  );
  return {
    dir,
    api,
    kubeconfig,
    ca,
    endpointCert,
    cp1Cert,
    cp1Port: cp1.port,
    cp2Port,
    async close() {
      await api.close();
      await cp1.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
