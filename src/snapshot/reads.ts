/**
 * What a live collection reads from the API server: the one list. collect.ts performs exactly
 * these lists and reads, rbac.ts derives the least-privilege grant from them, and each names the
 * snapshot input it fills, so a refused read is recorded against that input (not observed).
 */
import { RESOURCE_TYPES, type ResourceKind } from '../ports/kube-kinds.js';
import type { ConfigMapInput, SnapshotInput } from './model.js';
import { BOOTSTRAP_TOKEN_SECRET_TYPE } from './resources.js';

/** One collection list. */
export interface CollectionList {
  kind: ResourceKind;
  /** What its objects fill. */
  input: SnapshotInput;
  namespace?: string;
  fieldSelector?: string;
  /** Which ingest filter collect.ts applies per item as the pages arrive. */
  ingest?: 'anonymous-bindings' | 'bootstrap-token-secrets' | 'gitops-summary';
  /**
   * A custom resource: a server that does not serve it (404) has no such objects, which is an
   * answer (the controller is not installed here), not a list that went unread. Forbidden stays
   * not observed.
   */
  optionalCrd?: true;
}

export const COLLECTION_LISTS: readonly CollectionList[] = [
  { kind: 'namespaces', input: 'namespaces' },
  { kind: 'nodes', input: 'nodes' },
  { kind: 'pods', input: 'pods' },
  { kind: 'deployments', input: 'deployments' },
  { kind: 'replicasets', input: 'replicasets' },
  { kind: 'statefulsets', input: 'statefulsets' },
  { kind: 'daemonsets', input: 'daemonsets' },
  { kind: 'jobs', input: 'jobs' },
  { kind: 'cronjobs', input: 'cronjobs' },
  { kind: 'poddisruptionbudgets', input: 'poddisruptionbudgets' },
  { kind: 'services', input: 'services' },
  { kind: 'endpointslices', input: 'endpointslices' },
  { kind: 'persistentvolumes', input: 'persistentvolumes' },
  { kind: 'csidrivers', input: 'csidrivers' },
  { kind: 'storageclasses', input: 'storageclasses' },
  { kind: 'clusterrolebindings', input: 'anonymousBindings', ingest: 'anonymous-bindings' },
  { kind: 'rolebindings', input: 'anonymousBindings', ingest: 'anonymous-bindings' },
  {
    kind: 'secrets',
    input: 'bootstrapTokens',
    namespace: 'kube-system',
    fieldSelector: `type=${BOOTSTRAP_TOKEN_SECRET_TYPE}`,
    ingest: 'bootstrap-token-secrets',
  },
  { kind: 'argocd-applications', input: 'gitops', ingest: 'gitops-summary', optionalCrd: true },
  { kind: 'flux-kustomizations', input: 'gitops', ingest: 'gitops-summary', optionalCrd: true },
  { kind: 'flux-helmreleases', input: 'gitops', ingest: 'gitops-summary', optionalCrd: true },
];

/** One ConfigMap read by name: the first name, then each fallback until one exists. */
export interface CollectionGet {
  input: `configmap ${ConfigMapInput}`;
  namespace: string;
  names: readonly string[];
}

/** kubeadm before 1.24 named the kubelet ConfigMap after the minor version (kubelet-config-1.23). */
const LEGACY_KUBELET_CONFIG = Array.from({ length: 14 }, (_, i) => `kubelet-config-1.${10 + i}`);

export const COLLECTION_GETS: readonly CollectionGet[] = [
  { input: 'configmap kube-system/kubeadm-config', namespace: 'kube-system', names: ['kubeadm-config'] },
  {
    input: 'configmap kube-system/kubelet-config',
    namespace: 'kube-system',
    names: ['kubelet-config', ...LEGACY_KUBELET_CONFIG],
  },
  { input: 'configmap kube-system/kube-proxy', namespace: 'kube-system', names: ['kube-proxy'] },
  { input: 'configmap kube-system/coredns', namespace: 'kube-system', names: ['coredns'] },
  { input: 'configmap kube-system/cilium-config', namespace: 'kube-system', names: ['cilium-config'] },
  { input: 'configmap kube-public/cluster-info', namespace: 'kube-public', names: ['cluster-info'] },
];

/** The non-resource paths collection GETs. */
export const COLLECTION_PATHS: readonly string[] = ['/version'];

/** "v1 nodes", "v1 secrets in kube-system": how warnings and errors name a list. */
export function describeList(l: Pick<CollectionList, 'kind' | 'namespace'>): string {
  const t = RESOURCE_TYPES[l.kind];
  const apiVersion = t.group === '' ? t.version : `${t.group}/${t.version}`;
  return `${apiVersion} ${t.plural}${l.namespace ? ` in ${l.namespace}` : ''}`;
}
