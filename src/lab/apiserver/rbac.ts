/**
 * RBAC as kube-apiserver's authorizer decides it, for the lab: a request is allowed when a rule
 * of a ClusterRole bound by a ClusterRoleBinding, or of a Role or ClusterRole bound by a
 * RoleBinding in the request's namespace, names its verb, API group, resource (with
 * `resource/subresource`) and, when the rule lists them, its name; `*` matches any. Subjects match
 * by User name or Group. Nothing is allowed by default. Pure.
 */
import type { RequestUser } from './registry.js';

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

export interface RbacObjects {
  clusterRoles: { metadata: { name: string }; rules?: PolicyRule[] }[];
  roles: { metadata: { name: string; namespace?: string }; rules?: PolicyRule[] }[];
  clusterRoleBindings: { subjects?: Subject[]; roleRef: { kind: string; name: string } }[];
  roleBindings: {
    metadata: { namespace?: string };
    subjects?: Subject[];
    roleRef: { kind: string; name: string };
  }[];
}

export interface Attributes {
  verb: string;
  group: string;
  resource: string;
  sub?: string | undefined;
  namespace?: string | undefined;
  name?: string | undefined;
}

const has = (list: string[] | undefined, v: string) => (list ?? []).some((x) => x === '*' || x === v);

function ruleAllows(r: PolicyRule, a: Attributes): boolean {
  const resource = a.sub ? `${a.resource}/${a.sub}` : a.resource;
  if (!has(r.verbs, a.verb) || !has(r.apiGroups, a.group)) return false;
  if (!has(r.resources, resource) && !(r.resources ?? []).includes(`*/${a.sub ?? ''}`)) return false;
  if (!r.resourceNames || r.resourceNames.length === 0) return true;
  return a.name !== undefined && r.resourceNames.includes(a.name);
}

function boundTo(subjects: Subject[] | undefined, user: RequestUser): boolean {
  return (subjects ?? []).some(
    (s) =>
      (s.kind === 'User' && s.name === user.name) ||
      (s.kind === 'Group' && user.groups.includes(s.name ?? '')),
  );
}

export function rbacAllows(o: RbacObjects, user: RequestUser, a: Attributes): boolean {
  const clusterRole = (name: string) => o.clusterRoles.find((r) => r.metadata.name === name)?.rules ?? [];
  const rules: PolicyRule[] = [];
  for (const b of o.clusterRoleBindings)
    if (b.roleRef.kind === 'ClusterRole' && boundTo(b.subjects, user))
      rules.push(...clusterRole(b.roleRef.name));
  if (a.namespace !== undefined)
    for (const b of o.roleBindings) {
      if (b.metadata.namespace !== a.namespace || !boundTo(b.subjects, user)) continue;
      if (b.roleRef.kind === 'ClusterRole') rules.push(...clusterRole(b.roleRef.name));
      else
        rules.push(
          ...(o.roles.find((r) => r.metadata.name === b.roleRef.name && r.metadata.namespace === a.namespace)
            ?.rules ?? []),
        );
    }
  return rules.some((r) => ruleAllows(r, a));
}
