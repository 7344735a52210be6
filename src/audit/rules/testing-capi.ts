/**
 * What the capi.* rule tests share: the hazard fixture src/snapshot/fixtures/mgmt-hazards, a snapshot with
 * a management cluster, and the management cluster as ferry's kit leaves it after adoption.
 */
import { join } from 'node:path';
import { LAB_PROXMOX } from '../../capi/testing-kit.js';
import { deriveFacts } from '../../facts/derive.js';
import { labCluster } from '../../facts/testing-builders.js';
import { capiObjects } from '../../generate/capi/objects.js';
import { proxmoxInfra } from '../../generate/capi/proxmox.js';
import { deriveTalosValues } from '../../generate/talos/values.js';
import { loadMgmtDir } from '../../snapshot/mgmt.js';
import type { KubeObject, MgmtSnapshot, Snapshot } from '../../snapshot/model.js';
import type { RuleFinding, RuleResult } from '../rule.js';
import { makeContext, obj } from '../testing.js';
import { CAPI_RULES } from './capi.js';

const FIXTURE = join(import.meta.dirname, '../../snapshot/fixtures/mgmt-hazards/mgmt');
/** The fixture's management cluster, one hazard per object (its README lists them). */
export function loadHazards(): Promise<MgmtSnapshot> {
  return loadMgmtDir(FIXTURE);
}

export function withMgmt(mgmt: MgmtSnapshot | undefined, bend: (s: Snapshot) => void = () => {}): Snapshot {
  const s = labCluster();
  if (mgmt) {
    s.mgmt = mgmt;
    s.manifest.parts = [...s.manifest.parts, 'mgmt'];
  }
  bend(s);
  return s;
}

export function run(id: string, s: Snapshot): RuleResult {
  const rule = CAPI_RULES.find((r) => r.id === id)!;
  return rule.check(makeContext(s, { provisioner: 'capi', infra: 'proxmox' }));
}

export function findings(r: RuleResult): RuleFinding[] {
  if (!Array.isArray(r)) throw new Error(`expected findings, got ${JSON.stringify(r)}`);
  return r;
}

/** The management cluster after ferry's adoption: the kit's objects, status patched, Secrets present, providers pinned. */
export function adopted(): MgmtSnapshot {
  const s = labCluster();
  const v = deriveTalosValues(deriveFacts(s, { provisioner: 'capi', infra: 'proxmox' }));
  if (v.kind !== 'ok') throw new Error('values');
  const ns = 'lab';
  const endpoint = { host: v.values.endpointHost, port: 6443 };
  const built = capiObjects({
    namespace: ns,
    values: v.values,
    controlPlanePatches: [],
    controlPlaneSize: { cores: 4, memoryMiB: 8192, diskGb: 100 },
    pools: [{ group: '', size: { cores: 4, memoryMiB: 8192, diskGb: 100 }, patches: [], replaces: [] }],
    infra: proxmoxInfra(LAB_PROXMOX, 'lab', ns, endpoint),
  });
  const objects = built.objects.map((o) => structuredClone(o) as unknown as KubeObject);
  const tcp = objects.find((o) => o.kind === 'TalosControlPlane')!;
  tcp.status = { bootstrapped: true };
  const owner = [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'lab', uid: 'u-1' }];
  const secret = (name: string, keys: string[]): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns, ownerReferences: owner },
    data: Object.fromEntries(keys.map((k) => [k, ''])),
  });
  const provider = (name: string, providerName: string, type: string, version: string): KubeObject => ({
    apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3',
    kind: 'Provider',
    metadata: { name, namespace: `${name}-system` },
    providerName,
    type,
    version,
  });
  return {
    source: { kind: 'file', path: 'adopted' },
    objects: [
      ...objects,
      secret('lab-ca', ['tls.crt', 'tls.key']),
      secret('lab-talos', ['bundle']),
      provider('cluster-api', 'cluster-api', 'CoreProvider', 'v1.14.0'),
      provider('control-plane-talos', 'talos', 'ControlPlaneProvider', 'v0.5.13'),
    ],
    controllers: {
      kind: 'observed',
      deployments: ['cluster-api', 'control-plane-talos', 'cluster-api-operator'].map((component) => ({
        namespace: `${component}-system`,
        name: `${component}-controller-manager`,
        component,
        replicas: 2,
        leaderElection: 'on' as const,
        spread: 'hostname' as const,
      })),
    },
    crds: [
      {
        name: 'clusters.cluster.x-k8s.io',
        group: 'cluster.x-k8s.io',
        kind: 'Cluster',
        versions: [
          { name: 'v1beta1', served: true, storage: false },
          { name: 'v1beta2', served: true, storage: true },
        ],
      },
    ],
  };
}

/**
 * The management cluster once ferry has handed the control plane over: the TalosControlPlane
 * unpaused, the Cluster Ready with its infrastructure and control plane up, nothing rolling.
 */
export function handedOver(): MgmtSnapshot {
  const m = adopted();
  const tcp = m.objects.find((o) => o.kind === 'TalosControlPlane')!;
  delete tcp.metadata.annotations;
  const cluster = m.objects.find((o) => o.kind === 'Cluster')!;
  cluster.status = {
    initialization: { infrastructureProvisioned: true, controlPlaneInitialized: true },
    conditions: [{ type: 'Available', status: 'True' }],
  };
  return m;
}

export const withCcm = (s: Snapshot) => {
  s.resources.deployments.push(
    obj('Deployment', 'talos-cloud-controller-manager', { namespace: 'kube-system' }),
  );
};
