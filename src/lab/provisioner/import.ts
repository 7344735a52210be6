/**
 * What of a snapshot goes into the lab's API, and in what shape. Pure.
 *
 * Objects are loaded as a user would re-create them: identity and history (uid, resourceVersion,
 * creationTimestamp, generation, status) are dropped, the server assigns new ones. Pods of
 * controllers are not copied: the lab nodes controller recreates them from their owners, as a real
 * cluster would. Bare pods are copied onto their node; mirror pods (owned by a Node) are copied with
 * the new Node's uid. Nodes keep capacity, labels and taints, report their lab (loopback) address
 * instead of the real one and start without conditions: their kubelet posts them.
 */

import type { KubeObject, Snapshot } from '../../snapshot/model.js';
import { SERVER_METADATA_FIELDS } from '../../util/server-metadata.js';
import type { KObj } from '../apiserver/object.js';
import { apiPath } from '../nodes/world.js';

/** Annotation with the real address a lab node stands in for. */
export const REAL_ADDRESS_ANNOTATION = 'lab.ferry.dev/real-address';
/** Annotation marking every object the lab loaded from a snapshot. */
export const IMPORTED_ANNOTATION = 'lab.ferry.dev/imported-from';

type Kind = {
  key: keyof Snapshot['resources'];
  apiVersion: string;
  plural: string;
  namespaced: boolean;
};

/** Loaded in this order: namespaces first, then what lives in them. */
const LOADED: Kind[] = [
  { key: 'namespaces', apiVersion: 'v1', plural: 'namespaces', namespaced: false },
  { key: 'configmaps', apiVersion: 'v1', plural: 'configmaps', namespaced: true },
  { key: 'services', apiVersion: 'v1', plural: 'services', namespaced: true },
  { key: 'csidrivers', apiVersion: 'storage.k8s.io/v1', plural: 'csidrivers', namespaced: false },
  { key: 'storageclasses', apiVersion: 'storage.k8s.io/v1', plural: 'storageclasses', namespaced: false },
  { key: 'poddisruptionbudgets', apiVersion: 'policy/v1', plural: 'poddisruptionbudgets', namespaced: true },
  { key: 'deployments', apiVersion: 'apps/v1', plural: 'deployments', namespaced: true },
  { key: 'statefulsets', apiVersion: 'apps/v1', plural: 'statefulsets', namespaced: true },
  { key: 'daemonsets', apiVersion: 'apps/v1', plural: 'daemonsets', namespaced: true },
  { key: 'cronjobs', apiVersion: 'batch/v1', plural: 'cronjobs', namespaced: true },
];

/** Not loaded, and why (printed by `ferry lab up`). */
export const NOT_LOADED: Record<string, string> = {
  replicasets: 'recreated by the lab from their Deployments',
  jobs: 'the lab runs no Jobs',
  endpointslices: 'they would point at pods that no longer exist',
  persistentvolumes: 'the lab has no storage',
  bootstrapTokens: 'a snapshot holds no token secrets',
};

export type ImportItem = { path: string; body: KObj; what: string };

function describe(o: KubeObject): string {
  return `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
}

/** A copy without identity, history, status or owners; `source` recorded in an annotation. */
export function cleanObject(
  o: KubeObject,
  source: string,
  opts: { keepOwners?: boolean; keepStatus?: boolean } = {},
): KObj {
  const copy = structuredClone(o) as KObj;
  for (const k of SERVER_METADATA_FIELDS) delete copy.metadata[k];
  if (!opts.keepOwners) delete copy.metadata.ownerReferences;
  if (!opts.keepStatus) delete copy.status;
  const annotations = { ...(copy.metadata.annotations ?? {}) };
  delete annotations['kubectl.kubernetes.io/last-applied-configuration'];
  annotations[IMPORTED_ANNOTATION] = source;
  copy.metadata.annotations = annotations;
  return copy;
}

/** Services keep their cluster IP (what clients were given) but not their load-balancer status. */
function cleanService(o: KubeObject, source: string): KObj {
  const c = cleanObject(o, source);
  if (c.spec?.type === 'LoadBalancer') delete c.spec.loadBalancerIP;
  return c;
}

/** The objects to create, in order, with the collection path each is POSTed to. */
export function importItems(snapshot: Snapshot, source: string): ImportItem[] {
  const items: ImportItem[] = [];
  for (const kind of LOADED) {
    for (const o of snapshot.resources[kind.key] as KubeObject[]) {
      const body = kind.key === 'services' ? cleanService(o, source) : cleanObject(o, source);
      body.apiVersion = o.apiVersion || kind.apiVersion;
      items.push({
        path: apiPath(kind.apiVersion, kind.plural, kind.namespaced ? o.metadata.namespace : undefined),
        body,
        what: describe(o),
      });
    }
  }
  // The bindings for anonymous users that the snapshot kept (ClusterRoleBindings and RoleBindings).
  for (const o of snapshot.resources.anonymousBindings) {
    const plural = o.kind === 'RoleBinding' ? 'rolebindings' : 'clusterrolebindings';
    const ns = o.kind === 'RoleBinding' ? o.metadata.namespace : undefined;
    items.push({
      path: apiPath('rbac.authorization.k8s.io/v1', plural, ns),
      body: cleanObject(o, source),
      what: describe(o),
    });
  }
  return items;
}

/** A Node as the lab registers it: its lab address in place of the real one, no conditions. */
export function labNode(node: KubeObject, labAddress: string, source: string): KObj {
  const copy = cleanObject(node, source, { keepStatus: true });
  const real = (node.status?.addresses ?? []).find((a: { type: string }) => a.type === 'InternalIP')?.address;
  if (real) copy.metadata.annotations = { ...copy.metadata.annotations, [REAL_ADDRESS_ANNOTATION]: real };
  const st = node.status ?? {};
  copy.status = {
    ...(st.capacity && { capacity: st.capacity }),
    ...(st.allocatable && { allocatable: st.allocatable }),
    ...(st.nodeInfo && { nodeInfo: st.nodeInfo }),
    addresses: [
      { type: 'InternalIP', address: labAddress },
      { type: 'Hostname', address: node.metadata.name },
    ],
  };
  // The admission plugin adds the not-ready taint; the lifecycle controller lifts it once Ready.
  if (copy.spec?.taints) {
    copy.spec.taints = copy.spec.taints.filter(
      (t: { key: string }) => !t.key.startsWith('node.kubernetes.io/'),
    );
  }
  return copy;
}

/** Pods worth copying: bare pods and mirror pods. The rest are recreated by their controllers. */
export function copiedPods(snapshot: Snapshot): KubeObject[] {
  return snapshot.resources.pods.filter((p) => {
    const owners = p.metadata.ownerReferences ?? [];
    if (owners.length === 0) return p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
    return owners.some((o) => o.kind === 'Node' && o.controller === true);
  });
}

/** A copied pod: mirror pods get the new Node's uid; its node must exist in the lab. */
export function labPod(pod: KubeObject, nodeUids: Map<string, string>, source: string): KObj | undefined {
  const node = pod.spec?.nodeName as string | undefined;
  const mirror = (pod.metadata.ownerReferences ?? []).find((o) => o.kind === 'Node');
  const copy = cleanObject(pod, source, { keepOwners: true });
  if (mirror) {
    const uid = nodeUids.get(mirror.name);
    if (!uid) return undefined;
    copy.metadata.ownerReferences = [{ ...mirror, uid }];
  }
  if (node !== undefined && !nodeUids.has(node)) return undefined;
  return copy;
}
