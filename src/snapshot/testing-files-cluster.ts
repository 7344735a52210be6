/**
 * A files directory (docs/snapshot-layout.md §1) for tests: the literal YAML/JSON under
 * files-cluster/ copied into a temporary directory, plus a real kubeadm-layout PKI and served
 * certificates generated on the spot (committed certificates would expire).
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeKubeadmPki } from '../pki/kubeadm-layout.js';

export const FILES_CLUSTER_SOURCE = join(
  dirname(fileURLToPath(import.meta.url)),
  'fixtures',
  'files-cluster',
);

export interface FilesCluster {
  /** Parent temp directory: put extra outputs here, it is removed by cleanup(). */
  tmp: string;
  /** The files directory. */
  dir: string;
  cleanup(): Promise<void>;
}

export async function makeFilesCluster(opts: { pki?: boolean } = {}): Promise<FilesCluster> {
  const tmp = await mkdtemp(join(tmpdir(), 'ferry-files-'));
  const dir = join(tmp, 'cluster');
  await cp(FILES_CLUSTER_SOURCE, dir, { recursive: true });
  if (opts.pki !== false) {
    const pki = join(dir, 'pki');
    await writeKubeadmPki(pki, {
      clusterName: 'fixture',
      apiserver: {
        nodeName: 'cp-1',
        advertiseAddress: '10.0.0.11',
        dnsNames: ['kubernetes', 'kubernetes.default', 'k8s.example.internal'],
        ipAddresses: ['10.96.0.1'],
      },
      etcdMembers: [{ name: 'cp-1', ip: '10.0.0.11' }],
      key: { algorithm: 'ECDSA', curve: 'P-256' },
      serviceAccountKey: { algorithm: 'ECDSA', curve: 'P-256' },
    });
    await mkdir(join(dir, 'served-certs'));
    const apiserverPem = await readFile(join(pki, 'apiserver.crt'), 'utf8');
    const caPem = await readFile(join(pki, 'ca.crt'), 'utf8');
    // As openssl s_client -showcerts would save it: the leaf first, then the chain.
    await writeFile(join(dir, 'served-certs', '10.0.0.11_6443.pem'), apiserverPem + caPem);
    await writeFile(join(dir, 'served-certs', 'endpoint_6443.pem'), apiserverPem);
  }
  return { tmp, dir, cleanup: () => rm(tmp, { recursive: true, force: true }) };
}
