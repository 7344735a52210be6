/**
 * Test support: the Cluster API objects a capi kit holds for src/facts/testing-builders.ts labCluster (as
 * capi/cluster.yaml and capi/secrets.yaml carry them), without building a whole PKI: the Talos
 * bundle is a placeholder; `<cluster>-ca` holds a real CA (made once per test file), which adoption
 * mints the kubeconfig Secret's credential from. For the adoption tests.
 */

import { deriveFacts } from '../facts/derive.js';
import { labCluster } from '../facts/testing-builders.js';
import { capiObjects } from '../generate/capi/objects.js';
import { proxmoxInfra } from '../generate/capi/proxmox.js';
import { deriveTalosValues } from '../generate/talos/values.js';
import { createCA } from '../pki/forge.js';
import type { KubeObject } from '../snapshot/model.js';

/** The Proxmox settings of the test kits (data only: nothing connects to them). */
export const LAB_PROXMOX = {
  sourceNode: 'pve1',
  templateId: 9000,
  bridge: 'vmbr0',
  ipv4Addresses: ['10.20.0.100-10.20.0.120'],
  ipv4Prefix: 24,
  ipv4Gateway: '10.20.0.1',
  dnsServers: ['10.20.0.2'],
  bootDisk: 'scsi0',
};

const CA = await createCA({ commonName: 'kubernetes', key: { algorithm: 'ECDSA', curve: 'P-256' } });

export function labKitObjects(namespace = 'lab'): KubeObject[] {
  const v = deriveTalosValues(deriveFacts(labCluster(), { provisioner: 'capi', infra: 'proxmox' }));
  if (v.kind !== 'ok') throw new Error('labCluster: Talos values missing');
  const size = { cores: 4, memoryMiB: 8192, diskGb: 100 };
  const built = capiObjects({
    namespace,
    values: v.values,
    controlPlanePatches: [],
    controlPlaneSize: size,
    pools: [{ group: '', size, patches: [], replaces: ['worker-1'] }],
    infra: proxmoxInfra(LAB_PROXMOX, 'lab', namespace, { host: v.values.endpointHost, port: 6443 }),
  });
  const b64 = (t: string) => Buffer.from(t).toString('base64');
  const secret = (suffix: string, data: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    type: suffix === 'talos' ? 'Opaque' : 'cluster.x-k8s.io/secret',
    metadata: { name: `lab-${suffix}`, namespace, labels: { 'cluster.x-k8s.io/cluster-name': 'lab' } },
    data: Object.fromEntries(Object.entries(data).map(([k, x]) => [k, b64(x)])),
  });
  return [
    secret('ca', { 'tls.crt': CA.certPem, 'tls.key': CA.keyPem }),
    secret('talos', { bundle: 'bundle' }),
    ...built.objects.map((o) => structuredClone(o) as unknown as KubeObject),
  ];
}
