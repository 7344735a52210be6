import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { deriveFacts } from './derive.js';
import { listFacts } from './model.js';
import { factsDocument, formatValue, renderFacts, summarize } from './render.js';
import { labCluster } from './testing-builders.js';

/** The lab cluster with one conflict (pod CIDR) and one missing fact (no etcd state). */
function withConflictAndMissing() {
  const s = labCluster();
  s.kubeadm.clusterConfiguration!.networking.podSubnet = '10.32.0.0/12';
  s.etcd = undefined;
  return deriveFacts(s, { talosVersion: 'v1.12' });
}

describe('render facts', () => {
  it('table: every fact key, values, provenance, CONFLICT and MISSING marks, target with origins', () => {
    const facts = withConflictAndMissing();
    const out = renderFacts(facts, 'table');
    for (const f of listFacts(facts)) expect(out).toContain(`  ${f.key}`);
    expect(out).toContain('  network.podSubnets  10.244.0.0/16  CONFLICT');
    expect(out).toContain(
      '      candidate 10.32.0.0/12  ← ConfigMap kube-system/kubeadm-config data.ClusterConfiguration.networking.podSubnet',
    );
    expect(out).toMatch(
      /believed: 10\.244\.0\.0\/16 — ferry believes kube-controller-manager --cluster-cidr/,
    );
    expect(out).toContain('  etcd.members  MISSING  (etcd members)');
    expect(out).toMatch(/provide: etcd\/member-list\.json/);
    expect(out).toContain(
      '← kube-apiserver@cp-1 --service-cluster-ip-range (manifests/cp-1/kube-apiserver.yaml)',
    );
    expect(out).toContain('  talosVersion       v1.12.11  (newest release ferry knows of the 1.12 line)');
    expect(out).toContain('  cluster.controlPlaneEndpoint  https://k8s-api.lab.example:6443');
    const s = summarize(facts);
    expect(s.conflicts).toBeGreaterThanOrEqual(1);
    expect(out).toContain(
      `${s.facts} facts, ${s.conflicts} conflict${s.conflicts === 1 ? '' : 's'}, ${s.missing} missing`,
    );
  });

  it('json: one entry per fact in display order, structured provenance, unknown values explicit', () => {
    const facts = withConflictAndMissing();
    const doc = JSON.parse(renderFacts(facts, 'json'));
    expect(doc.facts.map((f: { key: string }) => f.key)).toEqual(listFacts(facts).map((f) => f.key));
    expect(doc.target.talosVersion).toBe('v1.12.11');
    expect(doc.target.talosRelease.etcdVersion).toBe('3.6.11');
    const pod = doc.facts.find((f: { key: string }) => f.key === 'network.podSubnets');
    expect(pod.conflict.candidates).toHaveLength(5);
    expect(pod.provenance[0]).toEqual({
      kind: 'flag',
      component: 'kube-controller-manager',
      node: 'cp-1',
      flag: 'cluster-cidr',
      from: { kind: 'file', path: 'manifests/cp-1/kube-controller-manager.yaml' },
    });
    const members = doc.facts.find((f: { key: string }) => f.key === 'etcd.members');
    expect(members).toMatchObject({
      value: null,
      known: false,
      missing: expect.stringContaining('member-list.json'),
    });
    const jwks = doc.facts.find((f: { key: string }) => f.key === 'apiserver.serviceAccountJwksUri');
    expect(jwks).toMatchObject({ value: null, known: true });
    expect(doc.summary).toEqual(summarize(facts));
  });

  it('yaml carries the same document as json', () => {
    const facts = withConflictAndMissing();
    expect(parseYaml(renderFacts(facts, 'yaml'))).toEqual(JSON.parse(JSON.stringify(factsDocument(facts))));
  });

  it('long lists are capped in the table and complete in json', () => {
    const many = Array.from({ length: 25 }, (_, i) => ({ version: `v1.32.${i}`, nodes: 1 }));
    const lines = formatValue(many);
    expect(lines).toHaveLength(21);
    expect(lines.at(-1)).toBe('… and 5 more (-o json lists all)');
    expect(formatValue([])).toEqual(['(none)']);
    expect(formatValue(null)).toEqual(['(not set)']);
    expect(formatValue([{ name: 'oidc-client-id', value: 'k' }])).toEqual(['--oidc-client-id=k']);
  });
});
