import { describe, expect, it } from 'vitest';
import { type Attributes, type RbacObjects, rbacAllows } from './rbac.js';

const user = { name: 'ferry-mgmt-backup', groups: ['backup-team', 'system:authenticated'] };
const objects = (o: Partial<RbacObjects>): RbacObjects => ({
  clusterRoles: [],
  roles: [],
  clusterRoleBindings: [],
  roleBindings: [],
  ...o,
});
const reader: RbacObjects['clusterRoles'][number] = {
  metadata: { name: 'reader' },
  rules: [
    { apiGroups: ['cluster.x-k8s.io'], resources: ['*'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['a-kubeconfig'] },
    { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters/status'], verbs: ['patch'] },
  ],
};
const bound = (subject: { kind: string; name: string }) =>
  objects({
    clusterRoles: [reader],
    clusterRoleBindings: [{ subjects: [subject], roleRef: { kind: 'ClusterRole', name: 'reader' } }],
  });
const ask = (o: RbacObjects, a: Partial<Attributes>) =>
  rbacAllows(o, user, { verb: 'list', group: 'cluster.x-k8s.io', resource: 'machines', ...a });

describe('the lab RBAC authorizer', () => {
  it('nothing is allowed without a binding', () => {
    expect(ask(objects({ clusterRoles: [reader] }), {})).toBe(false);
  });

  it('a ClusterRoleBinding to the user or one of its groups grants its role’s rules, and only those', () => {
    for (const o of [
      bound({ kind: 'User', name: 'ferry-mgmt-backup' }),
      bound({ kind: 'Group', name: 'backup-team' }),
    ]) {
      expect(ask(o, {})).toBe(true);
      expect(ask(o, { verb: 'delete', name: 'm1' })).toBe(false);
      expect(ask(o, { group: 'infrastructure.cluster.x-k8s.io' })).toBe(false);
    }
    expect(ask(bound({ kind: 'User', name: 'someone-else' }), {})).toBe(false);
    expect(ask(bound({ kind: 'ServiceAccount', name: 'ferry-mgmt-backup' }), {})).toBe(false);
  });

  it('resource names restrict a rule to those objects; a subresource is named resource/sub', () => {
    const o = bound({ kind: 'User', name: 'ferry-mgmt-backup' });
    const secret = { group: '', resource: 'secrets', verb: 'get', namespace: 'fleet' };
    expect(ask(o, { ...secret, name: 'a-kubeconfig' })).toBe(true);
    expect(ask(o, { ...secret, name: 'b-kubeconfig' })).toBe(false);
    expect(ask(o, { ...secret, verb: 'list' })).toBe(false);
    expect(ask(o, { verb: 'patch', resource: 'clusters', sub: 'status', name: 'a' })).toBe(true);
    expect(ask(o, { verb: 'patch', resource: 'clusters', name: 'a' })).toBe(false);
  });

  it('a RoleBinding grants its Role or ClusterRole in its own namespace only', () => {
    const o = objects({
      clusterRoles: [reader],
      roles: [
        {
          metadata: { name: 'cm', namespace: 'fleet' },
          rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }],
        },
      ],
      roleBindings: [
        {
          metadata: { namespace: 'fleet' },
          subjects: [{ kind: 'User', name: user.name }],
          roleRef: { kind: 'Role', name: 'cm' },
        },
        {
          metadata: { namespace: 'fleet' },
          subjects: [{ kind: 'User', name: user.name }],
          roleRef: { kind: 'ClusterRole', name: 'reader' },
        },
      ],
    });
    expect(ask(o, { group: '', resource: 'configmaps', verb: 'delete', namespace: 'fleet', name: 'x' })).toBe(
      true,
    );
    expect(ask(o, { group: '', resource: 'configmaps', verb: 'get', namespace: 'other', name: 'x' })).toBe(
      false,
    );
    expect(ask(o, { namespace: 'fleet' })).toBe(true);
    expect(ask(o, { namespace: 'other' })).toBe(false);
    expect(ask(o, {})).toBe(false); // cluster-wide: a RoleBinding grants nothing there
  });
});
