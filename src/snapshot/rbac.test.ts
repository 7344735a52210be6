import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { KubeReader } from '../ports/kube.js';
import { RESOURCE_TYPES } from '../ports/kube-kinds.js';
import { collectSnapshot } from './collect.js';
import type { KubeObject } from './model.js';
import { collectionRbac, type PolicyRule, renderRbac, subjectFromForbidden } from './rbac.js';
import { COLLECTION_GETS, COLLECTION_LISTS, COLLECTION_PATHS } from './reads.js';

type Ask = { verb: string; group: string; resource: string; namespace?: string; name?: string };

/** RBAC as kube-apiserver evaluates it: a ClusterRole anywhere, a Role only in its namespace. */
function allows(docs: readonly KubeObject[], ask: Ask): boolean {
  const match = (r: PolicyRule) =>
    (r.verbs.includes(ask.verb) || r.verbs.includes('*')) &&
    (r.apiGroups ?? []).includes(ask.group) &&
    (r.resources ?? []).includes(ask.resource) &&
    (r.resourceNames === undefined || (ask.name !== undefined && r.resourceNames.includes(ask.name)));
  return docs.some(
    (d) =>
      (d.kind === 'ClusterRole' || (d.kind === 'Role' && d.metadata.namespace === ask.namespace)) &&
      (d['rules'] as PolicyRule[]).some(match),
  );
}

describe('the RBAC ferry snapshot prints', () => {
  const docs = collectionRbac();

  it('grants every list and read the collection performs', () => {
    for (const l of COLLECTION_LISTS) {
      const t = RESOURCE_TYPES[l.kind];
      const ask = {
        verb: 'list',
        group: t.group,
        resource: t.plural,
        ...(l.namespace && { namespace: l.namespace }),
      };
      expect(allows(docs, ask), JSON.stringify(ask)).toBe(true);
    }
    for (const g of COLLECTION_GETS)
      for (const name of g.names) {
        const ask = { verb: 'get', group: '', resource: 'configmaps', namespace: g.namespace, name };
        expect(allows(docs, ask), JSON.stringify(ask)).toBe(true);
      }
    const cr = docs.find((d) => d.kind === 'ClusterRole')!;
    expect(cr['rules']).toContainEqual({ nonResourceURLs: [...COLLECTION_PATHS], verbs: ['get'] });
  });

  it('grants what collectSnapshot actually asks for, every list and every get', async () => {
    const asked: Ask[] = [];
    const kube: KubeReader = {
      server: 'https://10.0.0.10:6443',
      context: 'admin',
      // 1.23: the versioned kubelet-config-1.23 is asked too when kubelet-config is absent.
      version: async () => ({ gitVersion: 'v1.23.17', major: '1', minor: '23' }),
      list: async (kind, o) => {
        const t = RESOURCE_TYPES[kind];
        asked.push({
          verb: 'list',
          group: t.group,
          resource: t.plural,
          ...(o?.namespace && { namespace: o.namespace }),
        });
        return [];
      },
      get: async (kind, namespace, name) => {
        const t = RESOURCE_TYPES[kind];
        asked.push({
          verb: 'get',
          group: t.group,
          resource: t.plural,
          ...(namespace && { namespace }),
          name,
        });
        return undefined;
      },
    };
    await collectSnapshot({
      kube,
      fetchPeerCertificate: async () => {
        throw new Error('no TLS here');
      },
    });
    expect(asked.length).toBeGreaterThan(COLLECTION_LISTS.length);
    expect(asked).toContainEqual(expect.objectContaining({ name: 'kubelet-config-1.23' }));
    for (const a of asked) expect(allows(docs, a), JSON.stringify(a)).toBe(true);
  });

  it('grants nothing more: no write verb, no Secret beyond kube-system, no other ConfigMap', () => {
    const rules = docs.flatMap((d) => d['rules'] as PolicyRule[]);
    expect(new Set(rules.flatMap((r) => r.verbs))).toEqual(new Set(['list', 'get']));
    expect(allows(docs, { verb: 'list', group: '', resource: 'secrets', namespace: 'default' })).toBe(false);
    expect(
      allows(docs, { verb: 'get', group: '', resource: 'secrets', namespace: 'kube-system', name: 'x' }),
    ).toBe(false);
    expect(
      allows(docs, {
        verb: 'get',
        group: '',
        resource: 'configmaps',
        namespace: 'kube-system',
        name: 'other',
      }),
    ).toBe(false);
    expect(allows(docs, { verb: 'list', group: '', resource: 'configmaps', namespace: 'kube-system' })).toBe(
      false,
    );
  });

  it('binds it to the user the server named in its refusal, ready for kubectl apply', () => {
    const subject = subjectFromForbidden(
      'nodes is forbidden: User "system:serviceaccount:ops:snap" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    expect(subject).toEqual({ kind: 'ServiceAccount', namespace: 'ops', name: 'snap' });
    const text = renderRbac(collectionRbac(subject), subject);
    const parsed = parseAllDocuments(text).map((d) => d.toJS() as KubeObject);
    expect(parsed.map((d) => `${d.kind} ${d.metadata.namespace ?? ''}/${d.metadata.name}`)).toEqual([
      'ClusterRole /ferry-snapshot',
      'Role kube-system/ferry-snapshot',
      'Role kube-public/ferry-snapshot',
      'ClusterRoleBinding /ferry-snapshot',
      'RoleBinding kube-system/ferry-snapshot',
      'RoleBinding kube-public/ferry-snapshot',
    ]);
    for (const b of parsed.filter((d) => d.kind.endsWith('Binding')))
      expect(b['subjects']).toEqual([{ kind: 'ServiceAccount', namespace: 'ops', name: 'snap' }]);
    expect(subjectFromForbidden('configmaps "x" is forbidden: User "alice" cannot get resource')).toEqual({
      kind: 'User',
      name: 'alice',
    });
    expect(subjectFromForbidden('forbidden: User "system:anonymous" cannot get path "/"')).toBeUndefined();
  });
});
