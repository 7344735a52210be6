import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CrdValidator } from './crd.js';
import { stripPatchDirectives, validateTalosDocument, validateTalosDocuments } from './talos.js';

function goldenDocs(version: string, file: string): unknown[] {
  const text = readFileSync(join(import.meta.dirname, 'fixtures', 'talos', version, file), 'utf8');
  // talosctl writes `persist: true`, a field its own schema does not list (hidden upstream); drop it.
  return parseAllDocuments(text).map((d) => {
    const { persist: _p, ...rest } = d.toJS() as Record<string, unknown>;
    return rest;
  });
}

describe('Talos schema validation', () => {
  it('accepts the upstream generated configs (full mode)', () => {
    for (const f of ['base-controlplane.yaml', 'base-worker.yaml']) {
      expect(validateTalosDocuments(goldenDocs('v1.13.9', f), 'v1.13.9', 'full')).toEqual([]);
      expect(validateTalosDocuments(goldenDocs('v1.14.0-rc.1', f), 'v1.14.0-rc.1', 'full')).toEqual([]);
    }
  });

  it('full mode: a patch passes the schema document by document, but is no complete config', () => {
    const patch = [{ version: 'v1alpha1', machine: { nodeLabels: { 'lab.example/pool': 'data' } } }];
    expect(validateTalosDocument(patch[0], 'v1.13.9', 'full')).toEqual([]);
    const missing = validateTalosDocuments(patch, 'v1.13.9', 'full');
    expect(missing[0]?.message).toMatch(/machine\.type/);
    const worker = goldenDocs('v1.13.9', 'base-worker.yaml') as Record<string, Record<string, unknown>>[];
    const noToken = structuredClone(worker);
    delete noToken[0]!['machine']!['token'];
    expect(validateTalosDocuments(noToken, 'v1.13.9', 'full').map((e) => e.path)).toEqual(['/machine/token']);
    // v1.14: the cluster's identity lives in its own document.
    const v14 = goldenDocs('v1.14.0-rc.1', 'base-controlplane.yaml') as Record<string, unknown>[];
    const noIdentity = v14.filter((d) => d['kind'] !== 'DiscoveryIdentityConfig');
    expect(validateTalosDocuments(noIdentity, 'v1.14.0-rc.1', 'full').map((e) => e.path)).toEqual([
      '/clusterID',
      '/clusterSecret',
    ]);
  });

  it('rejects a legacy cluster field in the v1.14 schema but not in v1.13', () => {
    const doc = { version: 'v1alpha1', cluster: { network: { dnsDomain: 'cluster.local' } } };
    expect(validateTalosDocument(doc, 'v1.13.9', 'patch')).toEqual([]);
    const errors = validateTalosDocument(doc, 'v1.14.0-rc.1', 'patch');
    expect(errors.some((e) => e.message.includes('network'))).toBe(true);
  });

  it('requires required properties in full mode only', () => {
    const doc = { apiVersion: 'v1alpha1', kind: 'KubePrismConfig' };
    expect(validateTalosDocument(doc, 'v1.14.0-rc.1', 'patch')).toEqual([]);
    expect(validateTalosDocument(doc, 'v1.14.0-rc.1', 'full').length).toBeGreaterThan(0);
  });

  it('reports unknown kinds and wrong types', () => {
    expect(
      validateTalosDocument(
        { apiVersion: 'v1alpha1', kind: 'KubePrismConfig', port: 1 },
        'v1.13.9',
        'patch',
      )[0]?.message,
    ).toMatch(/no document kind/);
    const wrong = validateTalosDocument(
      { apiVersion: 'v1alpha1', kind: 'HostnameConfig', auto: 'sometimes' },
      'v1.13.9',
      'patch',
    );
    expect(wrong.length).toBeGreaterThan(0);
  });

  it('strips $patch directives in patch mode', () => {
    const doc = {
      version: 'v1alpha1',
      machine: {
        nodeLabels: {
          a: 'b',
          'node.kubernetes.io/exclude-from-external-load-balancers': { $patch: 'delete' },
        },
      },
    };
    expect(stripPatchDirectives(doc)).toEqual({ version: 'v1alpha1', machine: { nodeLabels: { a: 'b' } } });
    expect(validateTalosDocument(doc, 'v1.13.9', 'patch')).toEqual([]);
    expect(validateTalosDocument(doc, 'v1.13.9', 'full').length).toBeGreaterThan(0);
    expect(
      validateTalosDocument(
        { apiVersion: 'v1alpha1', kind: 'KubeFlannelCNIConfig', $patch: 'delete' },
        'v1.14.0-rc.1',
        'patch',
      ),
    ).toEqual([]);
  });
});

describe('CRD validation', () => {
  const crds = CrdValidator.fromSchemas();

  it('accepts a minimal valid Cluster and rejects unknown fields and bad types', () => {
    const cluster = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: 'lab', namespace: 'default' },
      spec: { controlPlaneEndpoint: { host: 'k8s-api.lab.example', port: 6443 } },
    };
    expect(crds.validate(cluster)).toEqual([]);
    expect(
      crds.validate({ ...cluster, spec: { controlPlaneEndpoint: { host: 'x', port: 'six' } } }).length,
    ).toBeGreaterThan(0);
    expect(
      crds
        .validate({ ...cluster, spec: { controlPlaneEndpont: {} } })
        .some((e) => e.message.includes('controlPlaneEndpont')),
    ).toBe(true);
  });

  it('selects the schema of the apiVersion given', () => {
    expect(crds.knows('cluster.x-k8s.io/v1beta1', 'Cluster')).toBe(true);
    expect(crds.knows('controlplane.cluster.x-k8s.io/v1alpha3', 'TalosControlPlane')).toBe(true);
    expect(
      crds.validate({ apiVersion: 'cluster.x-k8s.io/v9', kind: 'Cluster', metadata: { name: 'x' } })[0]
        ?.message,
    ).toMatch(/no CRD/);
  });
});
