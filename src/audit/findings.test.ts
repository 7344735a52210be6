import { describe, expect, it } from 'vitest';
import { describeEvidence, evidenceFromSource, fingerprintOf, subjectFromEvidence } from './findings.js';

describe('fingerprints', () => {
  const web = { kind: 'Deployment', group: 'apps', namespace: 'shop', name: 'web', uid: 'u-1' };

  it('depend on rule, identity and field path only', () => {
    const a = fingerprintOf('workload.pdb-missing', web, 'spec.replicas');
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(fingerprintOf('workload.pdb-missing', { ...web, labels: { app: 'x' } }, 'spec.replicas')).toBe(a);
    expect(fingerprintOf('workload.pdb-missing', web, 'spec.template')).not.toBe(a);
    expect(fingerprintOf('workload.node-pinned', web, 'spec.replicas')).not.toBe(a);
    expect(fingerprintOf('workload.pdb-missing', { ...web, namespace: 'other' }, 'spec.replicas')).not.toBe(
      a,
    );
    expect(fingerprintOf('workload.pdb-missing', { ...web, uid: 'u-2' }, 'spec.replicas')).not.toBe(a);
    // No ambiguity from concatenation: ("a","bc") differs from ("ab","c").
    expect(fingerprintOf('r.x', { kind: 'a', name: 'bc' }, undefined)).not.toBe(
      fingerprintOf('r.x', { kind: 'ab', name: 'c' }, undefined),
    );
  });

  it('ignore the API version of the evidence (a version bump is the same object)', () => {
    const v1 = subjectFromEvidence({
      kind: 'object',
      object: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', namespace: 'a', name: 'b' },
      field: 'spec',
    });
    const v1beta1 = subjectFromEvidence({
      kind: 'object',
      object: { apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', namespace: 'a', name: 'b' },
      field: 'spec',
    });
    expect(fingerprintOf('x.y', v1.subject, v1.field)).toBe(
      fingerprintOf('x.y', v1beta1.subject, v1beta1.field),
    );
  });
});

describe('evidence', () => {
  it('maps every SourceRef kind and keeps file lines and flags', () => {
    const file = evidenceFromSource(
      { kind: 'file', path: 'manifests/cp-1/kube-apiserver.yaml', line: 14 },
      { observed: 'x' },
    );
    expect(describeEvidence(file)).toBe('manifests/cp-1/kube-apiserver.yaml:14 (observed: x)');
    const flag = evidenceFromSource({
      kind: 'flag',
      component: 'kube-apiserver',
      node: 'cp-1',
      flag: 'service-account-issuer',
      from: { kind: 'file', path: 'manifests/cp-1/kube-apiserver.yaml' },
    });
    expect(describeEvidence(flag)).toContain('kube-apiserver@cp-1 --service-account-issuer');
    expect(subjectFromEvidence(flag)).toEqual({
      subject: { kind: 'Component', name: 'kube-apiserver', node: 'cp-1' },
      field: '--service-account-issuer',
    });
    const derived = evidenceFromSource({
      kind: 'derived',
      note: '10th IP',
      from: [{ kind: 'object', objectKind: 'Service', namespace: 'kube-system', name: 'kube-dns' }],
    });
    expect(derived).toMatchObject({
      kind: 'object',
      object: { kind: 'Service', name: 'kube-dns' },
      note: '10th IP',
    });
    expect(evidenceFromSource({ kind: 'etcd', endpoint: 'https://10.0.0.1:2379' }).kind).toBe('etcd-member');
    expect(evidenceFromSource({ kind: 'tls', address: '10.0.0.1:6443' }).kind).toBe('tls');
  });
});
