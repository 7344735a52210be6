/**
 * Read-only queries over a management-cluster snapshot (MgmtSnapshot): the Cluster API objects
 * by kind, which Cluster an object belongs to, whether its controller is paused (capi.md §4.7),
 * and the clusterctl inventory's provider versions. The audit's capi.* rules and the adoption
 * plan read the management cluster only through these.
 */

import type { KubeObject, MgmtSnapshot } from '../snapshot/model.js';
import { compareVersionText } from '../util/semver.js';
import { referenceAt } from './refs.js';

export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
export const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';
export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';
export const SKIP_PREFLIGHT_ANNOTATION = 'machineset.cluster.x-k8s.io/skip-preflight-checks';
export const MOVE_LABEL = 'clusterctl.cluster.x-k8s.io/move';
export const MOVE_HIERARCHY_LABEL = 'clusterctl.cluster.x-k8s.io/move-hierarchy';
export const BLOCK_MOVE_ANNOTATION = 'clusterctl.cluster.x-k8s.io/block-move';
/** The type Cluster API gives the Secrets it reads (kubeconfig, CA, Talos config). */
export const CAPI_SECRET_TYPE = 'cluster.x-k8s.io/secret';

/** How messages name an object: "Kind namespace/name". */
export function objectName(o: { kind: string; namespace?: string | undefined; name: string }): string {
  return `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
}

const group = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

export function ofKind(m: MgmtSnapshot, kind: string, apiGroup?: string): KubeObject[] {
  return m.objects.filter(
    (o) => o.kind === kind && (apiGroup === undefined || group(o.apiVersion) === apiGroup),
  );
}

export const clusters = (m: MgmtSnapshot) => ofKind(m, 'Cluster', 'cluster.x-k8s.io');
export const machines = (m: MgmtSnapshot) => ofKind(m, 'Machine', 'cluster.x-k8s.io');
export const machineDeployments = (m: MgmtSnapshot) => ofKind(m, 'MachineDeployment', 'cluster.x-k8s.io');
export const talosControlPlanes = (m: MgmtSnapshot) =>
  ofKind(m, 'TalosControlPlane', 'controlplane.cluster.x-k8s.io');
export const talosConfigs = (m: MgmtSnapshot) => ofKind(m, 'TalosConfig', 'bootstrap.cluster.x-k8s.io');
export const talosConfigTemplates = (m: MgmtSnapshot) =>
  ofKind(m, 'TalosConfigTemplate', 'bootstrap.cluster.x-k8s.io');
export const secrets = (m: MgmtSnapshot) => ofKind(m, 'Secret', '');
export const providers = (m: MgmtSnapshot) => ofKind(m, 'Provider', 'clusterctl.cluster.x-k8s.io');

const field = (o: KubeObject, path: string[]): unknown => {
  let cur: unknown = o;
  for (const k of path)
    cur = typeof cur === 'object' && cur !== null ? (cur as Record<string, unknown>)[k] : undefined;
  return cur;
};
export const spec = (o: KubeObject, ...path: string[]) => field(o, ['spec', ...path]);
export const status = (o: KubeObject, ...path: string[]) => field(o, ['status', ...path]);

/** The Cluster an object belongs to: its cluster-name label, else spec.clusterName. */
export function clusterNameOf(o: KubeObject): string | undefined {
  const l = o.metadata.labels?.[CLUSTER_NAME_LABEL];
  if (l) return l;
  const s = spec(o, 'clusterName');
  return typeof s === 'string' ? s : undefined;
}

/** The Cluster of a TalosControlPlane: the Cluster whose controlPlaneRef names it. */
export function clusterOfControlPlane(m: MgmtSnapshot, tcp: KubeObject): KubeObject | undefined {
  return clusters(m).find(
    (c) =>
      c.metadata.namespace === tcp.metadata.namespace &&
      (referenceAt(c, 'spec.controlPlaneRef')?.name === tcp.metadata.name ||
        (clusterNameOf(tcp) !== undefined && c.metadata.name === clusterNameOf(tcp))),
  );
}

export function clusterNamed(m: MgmtSnapshot, namespace: string | undefined, name: string | undefined) {
  return clusters(m).find((c) => c.metadata.namespace === namespace && c.metadata.name === name);
}

/** `annotations.IsPaused(cluster, obj)`: the Cluster's spec.paused, or the paused annotation on the object. */
export function isPaused(obj: KubeObject, cluster: KubeObject | undefined): boolean {
  return cluster?.spec?.['paused'] === true || obj.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined;
}

/** Control-plane Machines of a cluster, by label as CACPPT selects them (capi.md §2 status.replicas). */
export function controlPlaneMachines(
  m: MgmtSnapshot,
  namespace: string | undefined,
  cluster: string,
): KubeObject[] {
  return machines(m).filter(
    (x) =>
      x.metadata.namespace === namespace &&
      x.metadata.labels?.[CLUSTER_NAME_LABEL] === cluster &&
      x.metadata.labels?.[CONTROL_PLANE_LABEL] !== undefined,
  );
}

/** The TalosConfig a Machine's `spec.bootstrap.configRef` names (v1beta2 or v1beta1 shape), if it names one. */
export function bootstrapConfigRef(x: KubeObject): { kind: string; name: string } | undefined {
  const r = referenceAt(x, 'spec.bootstrap.configRef');
  return r?.kind !== undefined ? { kind: r.kind, name: r.name } : undefined;
}

/**
 * The machine templates the TalosControlPlanes and MachineDeployments of `cluster` clone their
 * machines from: Cluster API names those machines, and so the Talos nodes, after them.
 */
export function machineTemplatesOf(
  m: MgmtSnapshot,
  cluster: string,
): { role: 'control plane' | 'worker'; name: string }[] {
  const named = (o: KubeObject, field: string) => {
    const name = referenceAt(o, field)?.name;
    return name === undefined ? [] : [name];
  };
  return [
    ...talosControlPlanes(m)
      .filter((t) => clusterOfControlPlane(m, t)?.metadata.name === cluster || clusterNameOf(t) === cluster)
      .flatMap((t) => named(t, 'spec.infrastructureTemplate'))
      .map((name) => ({ role: 'control plane' as const, name })),
    ...machineDeployments(m)
      .filter((d) => clusterNameOf(d) === cluster)
      .flatMap((d) => named(d, 'spec.template.spec.infrastructureRef'))
      .map((name) => ({ role: 'worker' as const, name })),
  ];
}

export interface ProviderVersion {
  object: KubeObject;
  providerName: string;
  type: string;
  version: string;
}

export function providerVersions(m: MgmtSnapshot): ProviderVersion[] {
  return providers(m).flatMap((p) => {
    const providerName = p['providerName'];
    const type = p['type'];
    const version = p['version'];
    return typeof providerName === 'string' && typeof type === 'string' && typeof version === 'string'
      ? [{ object: p, providerName, type, version }]
      : [];
  });
}

/** a < b for "v1.2.3" texts. */
export function versionBelow(a: string, b: string): boolean {
  return compareVersionText(a, b) < 0;
}

/** The first DNS label, lower-cased: how CACPPT compares member names with Machines (H1). */
export function hostLabel(name: string): string {
  return (name.split('.')[0] ?? name).toLowerCase();
}

/** The Node a Machine's nodeRef names, if it has one. */
export function nodeRefName(m: KubeObject): string | undefined {
  const n = (m.status?.['nodeRef'] as { name?: unknown } | undefined)?.name;
  return typeof n === 'string' && n !== '' ? n : undefined;
}

/** The Secret core Cluster API reaches a workload cluster through (docs/knowledge/capi.md §4.9). */
export const kubeconfigSecretName = (cluster: string) => `${cluster}-kubeconfig`;
/** The data key Cluster API reads that kubeconfig from (`util/secret/consts.go`). */
export const KUBECONFIG_SECRET_KEY = 'value';

/**
 * Why a `<cluster>-kubeconfig` Secret gives Cluster API no kubeconfig, or undefined when it does:
 * `util/kubeconfig` `FromSecret` reads key `value` of a Secret of type cluster.x-k8s.io/secret.
 */
export function kubeconfigSecretUnusable(s: KubeObject): string | undefined {
  const type = (s as { type?: unknown }).type;
  const value = (s as { data?: Record<string, unknown> }).data?.[KUBECONFIG_SECRET_KEY];
  if (type !== 'cluster.x-k8s.io/secret')
    return `its type is ${String(type ?? 'unset')}, not cluster.x-k8s.io/secret`;
  if (typeof value !== 'string' || value === '')
    return `it holds no kubeconfig under key ${KUBECONFIG_SECRET_KEY}`;
  return undefined;
}

/** The Cluster reports its control plane initialized (v1beta2 status, or the condition). */
export function clusterControlPlaneInitialized(c: KubeObject | undefined): boolean {
  if (!c) return false;
  if (status(c, 'initialization', 'controlPlaneInitialized') === true) return true;
  const conds = status(c, 'conditions');
  return (
    Array.isArray(conds) &&
    conds.some(
      (x: { type?: unknown; status?: unknown }) =>
        x.type === 'ControlPlaneInitialized' && x.status === 'True',
    )
  );
}
