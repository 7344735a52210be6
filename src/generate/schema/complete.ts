/**
 * What makes a machine config complete rather than a patch. The Talos schema requires nothing of
 * the v1alpha1 document, so a patch passes it too; a node booted from a patch starts with a
 * partial config. These are the values a node needs to join: the trustd token and Talos API CA,
 * the cluster's identity, endpoint and networks, the Kubernetes CA and bootstrap token — and on
 * a control plane the keys it signs with. Paths as `talosctl gen config` writes them (the goldens
 * in fixtures/talos, talos.md §1 and §3.2): the legacy form keeps them in the v1alpha1 document,
 * the multi-document form (v1.14) in its Kube*Config and Discovery documents.
 */
import { findTalosRelease } from '../../knowledge/talos.js';
import type { SchemaError } from './talos.js';

type Doc = Record<string, unknown>;

/** [document kind ("" = v1alpha1), dotted path] that must hold a non-empty value. */
type Need = [kind: string, path: string];

const LEGACY: { all: Need[]; controlplane: Need[] } = {
  all: [
    ['', 'machine.token'],
    ['', 'machine.ca.crt'],
    ['', 'cluster.id'],
    ['', 'cluster.secret'],
    ['', 'cluster.clusterName'],
    ['', 'cluster.controlPlane.endpoint'],
    ['', 'cluster.network.podSubnets'],
    ['', 'cluster.network.serviceSubnets'],
    ['', 'cluster.token'],
    ['', 'cluster.ca.crt'],
  ],
  controlplane: [
    ['', 'machine.ca.key'],
    ['', 'cluster.ca.key'],
    ['', 'cluster.aggregatorCA.crt'],
    ['', 'cluster.aggregatorCA.key'],
    ['', 'cluster.serviceAccount.key'],
    ['', 'cluster.etcd.ca.crt'],
    ['', 'cluster.etcd.ca.key'],
  ],
};

const MULTIDOC: { all: Need[]; controlplane: Need[]; worker: Need[] } = {
  all: [
    ['', 'machine.token'],
    ['', 'machine.ca.crt'],
    ['', 'cluster.token'],
    ['DiscoveryIdentityConfig', 'clusterID'],
    ['DiscoveryIdentityConfig', 'clusterSecret'],
    ['KubeClusterConfig', 'clusterName'],
    ['KubeClusterConfig', 'endpoint'],
    ['KubeNetworkConfig', 'podSubnets'],
    ['KubeNetworkConfig', 'serviceSubnets'],
  ],
  controlplane: [
    ['', 'machine.ca.key'],
    ['', 'cluster.etcd.ca.crt'],
    ['', 'cluster.etcd.ca.key'],
    ['KubeAPIServerCAConfig', 'issuingCA.cert'],
    ['KubeAPIServerCAConfig', 'issuingCA.key'],
    ['KubeAggregatorCAConfig', 'issuingCA.cert'],
    ['KubeAggregatorCAConfig', 'issuingCA.key'],
    ['KubeServiceAccountConfig', 'issuer.privateKey'],
  ],
  worker: [['KubeAPIServerCAConfig', 'acceptedCAs']],
};

function at(doc: Doc | undefined, path: string): unknown {
  let cur: unknown = doc;
  for (const k of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Doc)[k];
  }
  return cur;
}

function present(v: unknown): boolean {
  if (v === undefined || v === null || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  return true;
}

/** Problems that make a machine-config stream less than a complete config (empty = complete). */
export function completeConfigErrors(docs: unknown[], talosVersion: string): SchemaError[] {
  const records = docs.filter((d): d is Doc => d !== null && typeof d === 'object' && !Array.isArray(d));
  const byKind = (kind: string) =>
    records.find((d) => (typeof d['kind'] === 'string' ? d['kind'] : '') === kind);
  const config = byKind('');
  const role = at(config, 'machine.type');
  if (role !== 'controlplane' && role !== 'worker') {
    return [
      {
        document: 'v1alpha1',
        path: '/machine/type',
        message: 'a complete config says its role (machine.type controlplane or worker)',
      },
    ];
  }
  const multi = findTalosRelease(talosVersion)?.configFormat === 'multidoc';
  const needs: Need[] = multi
    ? [...MULTIDOC.all, ...MULTIDOC[role]]
    : [...LEGACY.all, ...(role === 'controlplane' ? LEGACY.controlplane : [])];
  return needs
    .filter(([kind, path]) => !present(at(byKind(kind), path)))
    .map(([kind, path]) => ({
      document: kind || 'v1alpha1',
      path: `/${path.replace(/\./g, '/')}`,
      message: `a complete ${role} config has this value (a patch would leave the node without it)`,
    }));
}
