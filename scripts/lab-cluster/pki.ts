/** cp-1's /etc/kubernetes/pki: real certificates and keys in kubeadm's layout, new on every run. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeKubeadmPki } from '../../src/pki/kubeadm-layout.js';
import { CLUSTER, CONTROL_PLANES, nodeByName } from './cluster.js';

/** Writes the PKI under `dir` and returns the cluster CA certificate (PEM). */
export async function writePki(dir: string): Promise<string> {
  const cp1 = nodeByName('cp-1');
  await writeKubeadmPki(dir, {
    clusterName: CLUSTER.name,
    apiserver: {
      nodeName: cp1.name,
      advertiseAddress: cp1.ip,
      // kubeadm's defaults plus the endpoint and certSANs; deliberately no localhost / 127.0.0.1.
      dnsNames: [
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        `kubernetes.default.svc.${CLUSTER.dnsDomain}`,
        CLUSTER.endpointHost,
      ],
      ipAddresses: [CLUSTER.kubernetesServiceIP, CLUSTER.vip],
    },
    etcdMembers: CONTROL_PLANES.map((c) => ({ name: c.name, ip: c.ip })),
  });
  return readFile(join(dir, 'ca.crt'), 'utf8');
}
