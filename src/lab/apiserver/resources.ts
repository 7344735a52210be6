/**
 * The generic resource table that drives the whole server: every served resource is a row
 * (group, version, kind, plural, scope, subresources, field selectors, immutable fields), built-in
 * rows are static and custom resources get rows from their CustomResourceDefinition. No handler is
 * written per kind; the few behaviours real kinds add (pod grace, node taint, PDB status) key on
 * `group/plural` in admission.ts and registry.ts.
 */
import { isPlainObject, type KObj } from './object.js';

export type Subresource = 'status' | 'eviction' | 'binding' | 'scale';

export type ScalePaths = {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
};

export type ResourceDef = {
  /** '' for the core group. */
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  subresources: Subresource[];
  /** Field selectors besides metadata.name and metadata.namespace. */
  fields: string[];
  /** Dotted paths that may not change after create (`field is immutable`). */
  immutable: string[];
  /** metadata.generation starts at 1 and grows when anything but metadata/status changes. */
  tracksGeneration: boolean;
  /** What create does with a status sent in the body (real strategies drop it for most kinds). */
  statusOnCreate: 'keep' | 'clear';
  /** DELETE answers with the object (true) or a Status (false), as the real registry does. */
  returnDeletedObject: boolean;
  /**
   * Name rule: DNS-1123 label (namespaces, services), path segment (RBAC: `system:public-info-viewer`
   * is a valid ClusterRoleBinding name) or subdomain (everything else).
   */
  nameRule: 'label' | 'subdomain' | 'path-segment';
  scale?: ScalePaths;
  /** Served from a CRD: storage keys carry the group, list items keep apiVersion/kind. */
  custom: boolean;
};

type Row = Partial<ResourceDef> & Pick<ResourceDef, 'group' | 'version' | 'kind' | 'plural' | 'namespaced'>;

function row(r: Row): ResourceDef {
  return {
    listKind: `${r.kind}List`,
    singular: r.kind.toLowerCase(),
    shortNames: [],
    subresources: [],
    fields: [],
    immutable: [],
    tracksGeneration: false,
    statusOnCreate: 'keep',
    returnDeletedObject: false,
    nameRule: 'subdomain',
    custom: false,
    ...r,
  };
}

const REPLICAS: ScalePaths = {
  specReplicasPath: 'spec.replicas',
  statusReplicasPath: 'status.replicas',
  labelSelectorPath: 'spec.selector',
};

const WORKLOAD: Partial<ResourceDef> = {
  tracksGeneration: true,
  statusOnCreate: 'clear',
  immutable: ['spec.selector'],
};

export const BUILTIN_RESOURCES: readonly ResourceDef[] = [
  row({
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    shortNames: ['ns'],
    subresources: ['status'],
    fields: ['status.phase'],
    nameRule: 'label',
    returnDeletedObject: true,
  }),
  row({
    group: '',
    version: 'v1',
    kind: 'Node',
    plural: 'nodes',
    namespaced: false,
    shortNames: ['no'],
    subresources: ['status'],
    fields: ['spec.unschedulable'],
    returnDeletedObject: true,
  }),
  row({
    group: '',
    version: 'v1',
    kind: 'Pod',
    plural: 'pods',
    namespaced: true,
    shortNames: ['po'],
    subresources: ['status', 'eviction', 'binding'],
    fields: [
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
    statusOnCreate: 'clear',
    returnDeletedObject: true,
  }),
  row({
    group: '',
    version: 'v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    shortNames: ['svc'],
    subresources: ['status'],
    immutable: ['spec.clusterIP'],
    statusOnCreate: 'clear',
    nameRule: 'label',
    returnDeletedObject: true,
  }),
  row({
    group: '',
    version: 'v1',
    kind: 'Endpoints',
    plural: 'endpoints',
    namespaced: true,
    shortNames: ['ep'],
    listKind: 'EndpointsList',
    singular: 'endpoints',
  }),
  row({
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    shortNames: ['cm'],
  }),
  row({ group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true, fields: ['type'] }),
  row({
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    namespaced: true,
    shortNames: ['sa'],
  }),
  row({
    group: '',
    version: 'v1',
    kind: 'PersistentVolume',
    plural: 'persistentvolumes',
    namespaced: false,
    shortNames: ['pv'],
    subresources: ['status'],
    statusOnCreate: 'clear',
  }),
  row({
    group: '',
    version: 'v1',
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
    namespaced: true,
    shortNames: ['pvc'],
    subresources: ['status'],
    statusOnCreate: 'clear',
  }),
  row({
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
    shortNames: ['deploy'],
    subresources: ['status', 'scale'],
    scale: REPLICAS,
    ...WORKLOAD,
  }),
  row({
    group: 'apps',
    version: 'v1',
    kind: 'ReplicaSet',
    plural: 'replicasets',
    namespaced: true,
    shortNames: ['rs'],
    subresources: ['status', 'scale'],
    scale: REPLICAS,
    ...WORKLOAD,
  }),
  row({
    group: 'apps',
    version: 'v1',
    kind: 'StatefulSet',
    plural: 'statefulsets',
    namespaced: true,
    shortNames: ['sts'],
    subresources: ['status', 'scale'],
    scale: REPLICAS,
    ...WORKLOAD,
    immutable: ['spec.selector', 'spec.serviceName', 'spec.podManagementPolicy', 'spec.volumeClaimTemplates'],
  }),
  row({
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    plural: 'daemonsets',
    namespaced: true,
    shortNames: ['ds'],
    subresources: ['status'],
    ...WORKLOAD,
  }),
  row({
    group: 'batch',
    version: 'v1',
    kind: 'Job',
    plural: 'jobs',
    namespaced: true,
    subresources: ['status'],
    tracksGeneration: true,
    statusOnCreate: 'clear',
    immutable: ['spec.selector', 'spec.completions'],
  }),
  row({
    group: 'batch',
    version: 'v1',
    kind: 'CronJob',
    plural: 'cronjobs',
    namespaced: true,
    shortNames: ['cj'],
    subresources: ['status'],
    tracksGeneration: true,
    statusOnCreate: 'clear',
  }),
  row({
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    namespaced: true,
    shortNames: ['pdb'],
    subresources: ['status'],
    tracksGeneration: true,
    statusOnCreate: 'clear',
  }),
  row({
    group: 'discovery.k8s.io',
    version: 'v1',
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    namespaced: true,
    immutable: ['addressType'],
  }),
  row({ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true }),
  row({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'Role',
    plural: 'roles',
    namespaced: true,
    nameRule: 'path-segment',
  }),
  row({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'RoleBinding',
    plural: 'rolebindings',
    namespaced: true,
    nameRule: 'path-segment',
    immutable: ['roleRef'],
  }),
  row({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRole',
    plural: 'clusterroles',
    namespaced: false,
    nameRule: 'path-segment',
  }),
  row({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRoleBinding',
    plural: 'clusterrolebindings',
    namespaced: false,
    nameRule: 'path-segment',
    immutable: ['roleRef'],
  }),
  row({
    group: 'storage.k8s.io',
    version: 'v1',
    kind: 'CSIDriver',
    plural: 'csidrivers',
    namespaced: false,
    immutable: ['spec.attachRequired', 'spec.podInfoOnMount', 'spec.volumeLifecycleModes'],
  }),
  row({
    group: 'storage.k8s.io',
    version: 'v1',
    kind: 'StorageClass',
    plural: 'storageclasses',
    namespaced: false,
    shortNames: ['sc'],
    immutable: ['provisioner', 'parameters', 'reclaimPolicy', 'volumeBindingMode'],
  }),
  row({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    subresources: ['status'],
    tracksGeneration: true,
    immutable: ['spec.group', 'spec.names.plural'],
    returnDeletedObject: true,
  }),
];

export const CRD_GROUP = 'apiextensions.k8s.io';

export function apiVersionOf(def: Pick<ResourceDef, 'group' | 'version'>): string {
  return def.group === '' ? def.version : `${def.group}/${def.version}`;
}

export function builtinDef(group: string, version: string, plural: string): ResourceDef | undefined {
  return BUILTIN_RESOURCES.find((d) => d.group === group && d.version === version && d.plural === plural);
}

export function def(group: string, plural: string): ResourceDef {
  const d = BUILTIN_RESOURCES.find((r) => r.group === group && r.plural === plural);
  if (!d) throw new Error(`no built-in resource ${plural}.${group}`);
  return d;
}

/** Storage prefix of a resource's objects, all namespaces: `/registry/pods/`. */
export function resourcePrefix(d: ResourceDef): string {
  return d.custom ? `/registry/${d.group}/${d.plural}/` : `/registry/${d.plural}/`;
}

/** Storage prefix of one namespace's objects (or of all, for a cluster-scoped resource). */
export function collectionPrefix(d: ResourceDef, namespace: string | undefined): string {
  return d.namespaced && namespace !== undefined ? `${resourcePrefix(d)}${namespace}/` : resourcePrefix(d);
}

export function objectKey(d: ResourceDef, namespace: string | undefined, name: string): string {
  return d.namespaced ? `${resourcePrefix(d)}${namespace ?? ''}/${name}` : `${resourcePrefix(d)}${name}`;
}

type CrdVersion = {
  name: string;
  served?: boolean;
  storage?: boolean;
  subresources?: {
    status?: unknown;
    scale?: { specReplicasPath?: string; statusReplicasPath?: string; labelSelectorPath?: string };
  };
};

/** The rows a CustomResourceDefinition serves: one per served version. */
export function defsFromCrd(crd: KObj): ResourceDef[] {
  const spec = isPlainObject(crd.spec) ? crd.spec : {};
  const names = isPlainObject(spec.names) ? (spec.names as Record<string, unknown>) : {};
  const group = typeof spec.group === 'string' ? spec.group : '';
  const kind = typeof names.kind === 'string' ? names.kind : '';
  const plural = typeof names.plural === 'string' ? names.plural : '';
  if (!group || !kind || !plural) return [];
  const versions = Array.isArray(spec.versions) ? (spec.versions as CrdVersion[]) : [];
  return versions
    .filter((v) => v.served !== false && typeof v.name === 'string')
    .map((v) => {
      const sub = v.subresources ?? {};
      const scale =
        sub.scale?.specReplicasPath && sub.scale.statusReplicasPath
          ? {
              specReplicasPath: sub.scale.specReplicasPath.replace(/^\./, ''),
              statusReplicasPath: sub.scale.statusReplicasPath.replace(/^\./, ''),
              ...(sub.scale.labelSelectorPath && {
                labelSelectorPath: sub.scale.labelSelectorPath.replace(/^\./, ''),
              }),
            }
          : undefined;
      const subresources: Subresource[] = [];
      if (sub.status !== undefined && sub.status !== null) subresources.push('status');
      if (scale) subresources.push('scale');
      return row({
        group,
        version: v.name,
        kind,
        plural,
        listKind: typeof names.listKind === 'string' ? names.listKind : `${kind}List`,
        singular: typeof names.singular === 'string' ? names.singular : kind.toLowerCase(),
        shortNames: Array.isArray(names.shortNames) ? (names.shortNames as string[]) : [],
        namespaced: spec.scope !== 'Cluster',
        subresources,
        tracksGeneration: true,
        // With the status subresource the main endpoint ignores status, create included.
        statusOnCreate: subresources.includes('status') ? 'clear' : 'keep',
        returnDeletedObject: true,
        ...(scale && { scale }),
        custom: true,
      });
    });
}
