import { inputError } from '../errors.js';
import { GITOPS_GROUPS } from '../knowledge/gitops.js';
import { gitopsKind, gitopsSummary } from './gitops.js';
import {
  type BootstrapToken,
  emptyResources,
  type KubeObject,
  type ResourceKey,
  type Resources,
  type SourceRef,
} from './model.js';
import { isKubeObject, isRecord } from './validate.js';
import { decodeBase64 } from './values.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Drops what only bloats a snapshot and misleads an audit: metadata.managedFields and the kubectl
 * last-applied annotation (findings must come from the served object, never from that copy).
 * Shallow: the object is copied only when something is dropped; nested data is shared.
 */
export function stripIngestNoise<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata;
  if (!meta) return obj;
  const hasManaged = meta.managedFields !== undefined;
  const hasLastApplied = meta.annotations !== undefined && meta.annotations[LAST_APPLIED] !== undefined;
  if (!hasManaged && !hasLastApplied) return obj;
  const { managedFields: _drop, ...rest } = meta;
  const metadata: KubeObject['metadata'] = rest;
  if (hasLastApplied && meta.annotations) {
    const { [LAST_APPLIED]: _gone, ...annotations } = meta.annotations;
    if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
    else delete metadata.annotations;
  }
  return { ...obj, metadata };
}

const KIND_TO_KEY: ReadonlyMap<string, ResourceKey> = new Map<string, ResourceKey>([
  ['Namespace', 'namespaces'],
  ['Node', 'nodes'],
  ['Pod', 'pods'],
  ['Deployment', 'deployments'],
  ['ReplicaSet', 'replicasets'],
  ['StatefulSet', 'statefulsets'],
  ['DaemonSet', 'daemonsets'],
  ['Job', 'jobs'],
  ['CronJob', 'cronjobs'],
  ['PodDisruptionBudget', 'poddisruptionbudgets'],
  ['Service', 'services'],
  ['EndpointSlice', 'endpointslices'],
  ['ConfigMap', 'configmaps'],
  ['ClusterRoleBinding', 'anonymousBindings'],
  ['RoleBinding', 'anonymousBindings'],
  ['CSIDriver', 'csidrivers'],
  ['StorageClass', 'storageclasses'],
  ['PersistentVolume', 'persistentvolumes'],
]);

/** The kinds ferry keeps in a snapshot (Secrets: bootstrap tokens only). */
export const KEPT_KINDS: readonly string[] = [
  ...KIND_TO_KEY.keys(),
  ...new Set(Object.values(GITOPS_GROUPS)),
  'Secret',
];

/** The ConfigMaps ferry reads; everything else may hold application data and is not kept. */
const KEPT_CONFIGMAPS = new Set([
  'kube-system/kubeadm-config',
  'kube-system/kubelet-config',
  'kube-system/kube-proxy',
  'kube-system/coredns',
  'kube-system/cilium-config',
  'kube-public/cluster-info',
]);

export function isKeptConfigMap(namespace: string | undefined, name: string): boolean {
  if (KEPT_CONFIGMAPS.has(`${namespace}/${name}`)) return true;
  // kubeadm before 1.24 versioned the kubelet ConfigMap: kubelet-config-1.23.
  return namespace === 'kube-system' && /^kubelet-config-1\.\d+$/.test(name);
}

const ANONYMOUS_SUBJECTS = new Set(['User/system:anonymous', 'Group/system:unauthenticated']);

export function hasAnonymousSubject(binding: KubeObject): boolean {
  const subjects: unknown = binding.subjects;
  if (!Array.isArray(subjects)) return false;
  return subjects.some((s) => isRecord(s) && ANONYMOUS_SUBJECTS.has(`${String(s.kind)}/${String(s.name)}`));
}

export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';

/** Id, expiry, usages and groups of a bootstrap-token Secret; the secret half is never read. */
export function bootstrapTokenFromSecret(secret: KubeObject): BootstrapToken {
  const meta = secret.metadata;
  const field = (key: string): string | undefined => {
    const sd: unknown = secret.stringData;
    if (isRecord(sd) && typeof sd[key] === 'string') return sd[key] as string;
    const d: unknown = secret.data;
    if (!isRecord(d) || typeof d[key] !== 'string') return undefined;
    const bytes = decodeBase64(d[key] as string);
    // Never quoted: token-secret sits beside these fields.
    if (!bytes)
      throw inputError(
        'a bootstrap-token Secret value is not valid base64 (not shown)',
        { object: `Secret ${meta.namespace ?? ''}/${meta.name}`, field: `data.${key}` },
        'fix the Secret (kubectl -n kube-system get secret NAME -o yaml shows it as the API stores it)',
      );
    return bytes.toString('utf8');
  };
  const source: SourceRef = { kind: 'object', objectKind: 'Secret', name: meta.name };
  if (meta.namespace !== undefined) source.namespace = meta.namespace;
  const usages: string[] = [];
  for (const key of collectKeys(secret)) {
    const m = /^usage-bootstrap-(.+)$/.exec(key);
    if (m && field(key) === 'true') usages.push(m[1] as string);
  }
  const groups = field('auth-extra-groups');
  const token: BootstrapToken = {
    id: field('token-id') ?? meta.name.replace(/^bootstrap-token-/, ''),
    usages: usages.sort(),
    authExtraGroups: groups
      ? groups
          .split(',')
          .map((g) => g.trim())
          .filter((g) => g !== '')
      : [],
    source,
  };
  const expiration = field('expiration');
  if (expiration !== undefined) token.expiration = expiration;
  const description = field('description');
  if (description !== undefined) token.description = description;
  return token;
}

function collectKeys(secret: KubeObject): string[] {
  const keys = new Set<string>();
  for (const d of [secret.data, secret.stringData] as unknown[]) {
    if (isRecord(d)) for (const k of Object.keys(d)) keys.add(k);
  }
  return [...keys];
}

export type SkipReason =
  | 'not-an-object'
  | 'unknown-kind'
  | 'unused-configmap'
  | 'no-anonymous-subject'
  | 'secret';

/** Where an object goes in Resources, or why it is left out. */
export type Route = { keep: ResourceKey | 'bootstrapTokens' } | { skip: SkipReason };

/** The one decision of what ferry keeps of an object (classifyObjects; the loader checks only those). */
export function routeOf(obj: KubeObject): Route {
  if (obj.kind === 'Secret')
    return obj.type === BOOTSTRAP_TOKEN_SECRET_TYPE ? { keep: 'bootstrapTokens' } : { skip: 'secret' };
  if (gitopsKind(obj) !== undefined) return { keep: 'gitops' };
  const key = KIND_TO_KEY.get(obj.kind);
  if (key === undefined) return { skip: 'unknown-kind' };
  if (key === 'configmaps' && !isKeptConfigMap(obj.metadata.namespace, obj.metadata.name))
    return { skip: 'unused-configmap' };
  if (key === 'anonymousBindings' && !hasAnonymousSubject(obj)) return { skip: 'no-anonymous-subject' };
  return { keep: key };
}

/**
 * Routes objects into Resources by kind, in one linear pass. Keeps only the ConfigMaps ferry reads
 * and only bindings with anonymous subjects; turns bootstrap-token Secrets into BootstrapTokens and
 * drops every other Secret; expands `List`s (kubectl's `List` and typed lists such as `PodList`,
 * whose items carry no kind). `onSkip` hears about what was left out, for warnings.
 */
export function classifyObjects(
  objs: KubeObject[],
  into: Resources = emptyResources(),
  onSkip?: (obj: unknown, reason: SkipReason) => void,
): Resources {
  const visit = (raw: unknown): void => {
    if (
      isRecord(raw) &&
      typeof raw.kind === 'string' &&
      raw.kind.endsWith('List') &&
      Array.isArray(raw.items)
    ) {
      const itemKind = raw.kind === 'List' ? undefined : raw.kind.slice(0, -4);
      for (const item of raw.items) {
        if (itemKind && isRecord(item) && item.kind === undefined) {
          visit({ apiVersion: raw.apiVersion, kind: itemKind, ...item });
        } else {
          visit(item);
        }
      }
      return;
    }
    if (!isKubeObject(raw)) {
      onSkip?.(raw, 'not-an-object');
      return;
    }
    const route = routeOf(raw);
    if ('skip' in route) onSkip?.(raw, route.skip);
    else if (route.keep === 'bootstrapTokens') into.bootstrapTokens.push(bootstrapTokenFromSecret(raw));
    else if (route.keep === 'gitops') into.gitops.push(gitopsSummary(stripIngestNoise(raw)));
    else into[route.keep].push(stripIngestNoise(raw));
  };
  for (const o of objs) visit(o);
  return into;
}
