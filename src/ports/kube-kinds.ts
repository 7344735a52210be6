/**
 * The Kubernetes resources ferry reads, with the REST coordinates needed to list them. Pure data:
 * the core names a resource by its key, the adapter turns the key into a URL.
 */

export type ResourceKind =
  | 'namespaces'
  | 'nodes'
  | 'pods'
  | 'deployments'
  | 'replicasets'
  | 'statefulsets'
  | 'daemonsets'
  | 'jobs'
  | 'cronjobs'
  | 'poddisruptionbudgets'
  | 'services'
  | 'endpointslices'
  | 'persistentvolumes'
  | 'configmaps'
  | 'secrets'
  | 'clusterrolebindings'
  | 'rolebindings'
  | 'csidrivers'
  | 'storageclasses'
  | 'argocd-applications'
  | 'flux-kustomizations'
  | 'flux-helmreleases';

export interface ResourceType {
  /** "" for the core group. */
  group: string;
  version: string;
  /** URL path segment. */
  plural: string;
  /** Kind of each item; list responses leave it out of the items, so the adapter puts it back. */
  kind: string;
  namespaced: boolean;
}

export const RESOURCE_TYPES: Readonly<Record<ResourceKind, ResourceType>> = {
  namespaces: { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
  nodes: { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false },
  pods: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  deployments: { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true },
  replicasets: { group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet', namespaced: true },
  statefulsets: {
    group: 'apps',
    version: 'v1',
    plural: 'statefulsets',
    kind: 'StatefulSet',
    namespaced: true,
  },
  daemonsets: { group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet', namespaced: true },
  jobs: { group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', namespaced: true },
  cronjobs: { group: 'batch', version: 'v1', plural: 'cronjobs', kind: 'CronJob', namespaced: true },
  poddisruptionbudgets: {
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
  },
  services: { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  endpointslices: {
    group: 'discovery.k8s.io',
    version: 'v1',
    plural: 'endpointslices',
    kind: 'EndpointSlice',
    namespaced: true,
  },
  persistentvolumes: {
    group: '',
    version: 'v1',
    plural: 'persistentvolumes',
    kind: 'PersistentVolume',
    namespaced: false,
  },
  configmaps: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
  secrets: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  clusterrolebindings: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
    namespaced: false,
  },
  rolebindings: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'rolebindings',
    kind: 'RoleBinding',
    namespaced: true,
  },
  csidrivers: {
    group: 'storage.k8s.io',
    version: 'v1',
    plural: 'csidrivers',
    kind: 'CSIDriver',
    namespaced: false,
  },
  storageclasses: {
    group: 'storage.k8s.io',
    version: 'v1',
    plural: 'storageclasses',
    kind: 'StorageClass',
    namespaced: false,
  },
  // GitOps controllers that revert what ferry changes (src/knowledge/gitops.ts). Each is a CRD: a
  // cluster without the controller does not serve it (collection reads that as "none here").
  'argocd-applications': {
    group: 'argoproj.io',
    version: 'v1alpha1',
    plural: 'applications',
    kind: 'Application',
    namespaced: true,
  },
  'flux-kustomizations': {
    group: 'kustomize.toolkit.fluxcd.io',
    version: 'v1',
    plural: 'kustomizations',
    kind: 'Kustomization',
    namespaced: true,
  },
  'flux-helmreleases': {
    group: 'helm.toolkit.fluxcd.io',
    version: 'v2',
    plural: 'helmreleases',
    kind: 'HelmRelease',
    namespaced: true,
  },
};

export function apiVersionOf(t: ResourceType): string {
  return t.group === '' ? t.version : `${t.group}/${t.version}`;
}

/**
 * REST path of a collection (all namespaces when `namespace` is absent) or of one object.
 * Names and namespaces are URL-encoded: they come from user flags and from the cluster.
 */
export function resourcePath(kind: ResourceKind, opts: { namespace?: string; name?: string } = {}): string {
  const t = RESOURCE_TYPES[kind];
  const root = t.group === '' ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  const ns =
    t.namespaced && opts.namespace !== undefined ? `/namespaces/${encodeURIComponent(opts.namespace)}` : '';
  const name = opts.name !== undefined ? `/${encodeURIComponent(opts.name)}` : '';
  return `${root}${ns}/${t.plural}${name}`;
}
