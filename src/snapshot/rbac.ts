/**
 * The least privilege a live collection needs, derived from reads.ts (the one list of what it
 * reads), never written by hand: a ClusterRole for the cluster-wide lists and /version, and a Role
 * per namespace for the namespaced reads (the bootstrap-token Secrets of kube-system, the
 * ConfigMaps by name). `list` only: the collection pages with limit/continue and never watches.
 */
import { stringify } from 'yaml';
import { RESOURCE_TYPES } from '../ports/kube-kinds.js';
import type { KubeObject } from './model.js';
import { COLLECTION_GETS, COLLECTION_LISTS, COLLECTION_PATHS } from './reads.js';

export const RBAC_NAME = 'ferry-snapshot';

export type RbacSubject =
  | { kind: 'User'; name: string }
  | { kind: 'ServiceAccount'; name: string; namespace: string };

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

/** The ClusterRole, the Roles and, with a subject, the bindings that grant them to it. */
export function collectionRbac(subject?: RbacSubject): KubeObject[] {
  // namespace ('' = cluster-wide) → API group → resources listed
  const lists = new Map<string, Map<string, string[]>>();
  // namespace → ConfigMap names read
  const gets = new Map<string, string[]>();
  const entry = <V>(m: Map<string, V>, k: string, v: () => V): V => {
    if (!m.has(k)) m.set(k, v());
    return m.get(k)!;
  };
  for (const l of COLLECTION_LISTS) {
    const t = RESOURCE_TYPES[l.kind];
    entry(
      entry(lists, l.namespace ?? '', () => new Map()),
      t.group,
      () => [],
    ).push(t.plural);
  }
  for (const g of COLLECTION_GETS) entry(gets, g.namespace, () => []).push(...g.names);
  const listRules = (ns: string): PolicyRule[] =>
    [...(lists.get(ns) ?? new Map<string, string[]>())].map(([group, resources]) => ({
      apiGroups: [group],
      resources: [...new Set(resources)],
      verbs: ['list'],
    }));
  const clusterRules = [...listRules(''), { nonResourceURLs: [...COLLECTION_PATHS], verbs: ['get'] }];
  const roleRules = new Map<string, PolicyRule[]>();
  for (const ns of new Set([...lists.keys(), ...gets.keys()])) {
    if (ns === '') continue;
    const names = gets.get(ns);
    roleRules.set(ns, [
      ...listRules(ns),
      ...(names
        ? [{ apiGroups: [''], resources: ['configmaps'], resourceNames: names, verbs: ['get'] }]
        : []),
    ]);
  }

  const rbac = 'rbac.authorization.k8s.io';
  const out: KubeObject[] = [
    { apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: { name: RBAC_NAME }, rules: clusterRules },
  ];
  for (const [namespace, rules] of roleRules)
    out.push({ apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: RBAC_NAME, namespace }, rules });
  if (!subject) return out;
  const subjects = [subject.kind === 'User' ? { apiGroup: rbac, ...subject } : subject];
  out.push({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name: RBAC_NAME },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: RBAC_NAME },
    subjects,
  });
  for (const namespace of roleRules.keys())
    out.push({
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: { name: RBAC_NAME, namespace },
      roleRef: { apiGroup: rbac, kind: 'Role', name: RBAC_NAME },
      subjects,
    });
  return out;
}

/** The documents as one YAML stream for `kubectl apply -f`, with a header saying what they are. */
export function renderRbac(docs: readonly KubeObject[], subject?: RbacSubject): string {
  const header = [
    "# What ferry's live collection (`ferry snapshot`, `ferry audit --kubeconfig`) reads, and nothing more.",
    subject
      ? `# Bound to ${subject.kind} ${subject.kind === 'ServiceAccount' ? `${subject.namespace}/` : ''}${subject.name}, the user the API server refused. Apply with an admin kubeconfig: kubectl apply -f FILE`
      : `# Bind it to the user that takes snapshots: kubectl create clusterrolebinding ${RBAC_NAME} --clusterrole=${RBAC_NAME} --user=NAME, and a RoleBinding to each Role (kubectl -n NAMESPACE create rolebinding ${RBAC_NAME} --role=${RBAC_NAME} --user=NAME).`,
  ];
  return `${header.join('\n')}\n${docs.map((d) => stringify(d)).join('---\n')}`;
}

/**
 * Who the server refused, from its 403 message (`User "system:serviceaccount:ns:name" cannot …`):
 * the subject of the bindings, so what is printed is ready to apply.
 */
export function subjectFromForbidden(message: string): RbacSubject | undefined {
  const user = /User "([^"]+)" cannot/.exec(message)?.[1];
  if (user === undefined) return undefined;
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user);
  if (sa) return { kind: 'ServiceAccount', namespace: sa[1]!, name: sa[2]! };
  if (user === 'system:anonymous') return undefined; // granting anonymous is never the fix
  return { kind: 'User', name: user };
}
