/**
 * The capi.* rules on the offline fixture test/fixtures/mgmt-hazards (one hazard per object), and
 * on the management cluster as ferry's kit leaves it (the generated objects, the status patch
 * applied, the Secrets created): each rule finds its hazard in the first and nothing in the second.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { labCluster } from '../../../test/facts/builders.js';
import { deriveFacts } from '../../facts/derive.js';
import { capiObjects } from '../../generate/capi/objects.js';
import { proxmoxInfra } from '../../generate/capi/proxmox.js';
import { deriveTalosValues } from '../../generate/talos/values.js';
import { loadMgmtDir } from '../../snapshot/mgmt.js';
import type { KubeObject, MgmtSnapshot, Snapshot } from '../../snapshot/model.js';
import type { RuleFinding, RuleResult } from '../rule.js';
import { makeContext, obj } from '../testing.js';
import { CAPI_RULES } from './capi.js';

const FIXTURE = join(import.meta.dirname, '../../../test/fixtures/mgmt-hazards/mgmt');
let hazards: MgmtSnapshot;
beforeAll(async () => {
  hazards = await loadMgmtDir(FIXTURE);
});

function withMgmt(mgmt: MgmtSnapshot | undefined, bend: (s: Snapshot) => void = () => {}): Snapshot {
  const s = labCluster();
  if (mgmt) {
    s.mgmt = mgmt;
    s.manifest.parts = [...s.manifest.parts, 'mgmt'];
  }
  bend(s);
  return s;
}

function run(id: string, s: Snapshot): RuleResult {
  const rule = CAPI_RULES.find((r) => r.id === id)!;
  return rule.check(makeContext(s, { provisioner: 'capi', infra: 'proxmox' }));
}

function findings(r: RuleResult): RuleFinding[] {
  if (!Array.isArray(r)) throw new Error(`expected findings, got ${JSON.stringify(r)}`);
  return r;
}

/** The management cluster after ferry's adoption: the kit's objects, status patched, Secrets present, providers pinned. */
function adopted(): MgmtSnapshot {
  const s = labCluster();
  const v = deriveTalosValues(deriveFacts(s, { provisioner: 'capi', infra: 'proxmox' }));
  if (v.kind !== 'ok') throw new Error('values');
  const ns = 'lab';
  const endpoint = { host: v.values.endpointHost, port: 6443 };
  const built = capiObjects({
    namespace: ns,
    values: v.values,
    controlPlanePatches: [],
    controlPlaneSize: { cores: 4, memoryMiB: 8192, diskGb: 100 },
    pools: [{ group: '', size: { cores: 4, memoryMiB: 8192, diskGb: 100 }, patches: [], replaces: [] }],
    infra: proxmoxInfra(
      {
        sourceNode: 'pve1',
        templateId: 9000,
        bridge: 'vmbr0',
        ipv4Addresses: ['10.20.0.100-10.20.0.120'],
        ipv4Prefix: 24,
        ipv4Gateway: '10.20.0.1',
        dnsServers: ['10.20.0.2'],
        bootDisk: 'scsi0',
      },
      'lab',
      ns,
      endpoint,
    ),
  });
  const objects = built.objects.map((o) => structuredClone(o) as unknown as KubeObject);
  const tcp = objects.find((o) => o.kind === 'TalosControlPlane')!;
  tcp.status = { bootstrapped: true };
  const owner = [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'lab', uid: 'u-1' }];
  const secret = (name: string, keys: string[]): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns, ownerReferences: owner },
    data: Object.fromEntries(keys.map((k) => [k, ''])),
  });
  const provider = (name: string, providerName: string, type: string, version: string): KubeObject => ({
    apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3',
    kind: 'Provider',
    metadata: { name, namespace: `${name}-system` },
    providerName,
    type,
    version,
  });
  return {
    source: { kind: 'file', path: 'adopted' },
    objects: [
      ...objects,
      secret('lab-ca', ['tls.crt', 'tls.key']),
      secret('lab-talos', ['bundle']),
      provider('cluster-api', 'cluster-api', 'CoreProvider', 'v1.14.0'),
      provider('control-plane-talos', 'talos', 'ControlPlaneProvider', 'v0.5.13'),
    ],
    crds: [
      {
        name: 'clusters.cluster.x-k8s.io',
        group: 'cluster.x-k8s.io',
        kind: 'Cluster',
        versions: [
          { name: 'v1beta1', served: true, storage: false },
          { name: 'v1beta2', served: true, storage: true },
        ],
      },
    ],
  };
}

const withCcm = (s: Snapshot) => {
  s.resources.deployments.push(
    obj('Deployment', 'talos-cloud-controller-manager', { namespace: 'kube-system' }),
  );
};

describe('capi.* rules', () => {
  it('the fixture is read as the snapshot stores it: Secrets without values, CRDs summarised', () => {
    expect(hazards.crds.map((c) => c.name)).toEqual(['clusters.cluster.x-k8s.io']);
    const creds = hazards.objects.find((o) => o.metadata.name === 'lab-proxmox-credentials')!;
    expect(creds['data']).toEqual({ url: '', token: '', secret: '' });
  });

  const cases: [string, RegExp[]][] = [
    [
      'capi.tcp-etcd-audit',
      [/not paused while kubeadm etcd members cp-1/, /runs as Node talos-7xq-4lm/, /v0\.5\.12/],
    ],
    ['capi.bootstrap-split-brain', [/status\.bootstrapped false/]],
    ['capi.secrets-not-precreated', [/lab-talos does not exist/, /lab-ca lacks tls\.key/]],
    ['capi.secret-not-moved', [/lab-proxmox-credentials/]],
    ['capi.machineset-preflight-hold', [/lab-workers does not skip/]],
    [
      'capi.providerid-missing',
      [/no cloud-controller-manager/, /lab-worker does not inject/, /lab-workers-6d9f7-x2v8p is Provisioned/],
    ],
    ['capi.contract-v1beta1', [/v1\.16\.0/, /does not serve v1beta1/]],
  ];
  for (const [id, expected] of cases) {
    it(`${id}: finds its hazard in the fixture, nothing once ferry adopted`, () => {
      const bad = findings(run(id, withMgmt(hazards)));
      expect(bad.map((f) => f.message)).toHaveLength(expected.length);
      for (const re of expected)
        expect(
          bad.some((f) => re.test(f.message)),
          String(re),
        ).toBe(true);
      for (const f of bad) expect(f.evidence.length).toBeGreaterThan(0);
      expect(findings(run(id, withMgmt(adopted(), withCcm)))).toEqual([]);
    });
  }

  it('without the management cluster every capi rule is skipped, saying how to provide it', () => {
    for (const r of CAPI_RULES) {
      const out = r.check(makeContext(withMgmt(undefined), { provisioner: 'capi' }));
      expect(out, r.id).toMatchObject({ kind: 'skipped' });
    }
  });

  it('capi.tcp-etcd-audit fails closed: an unpaused TCP with no view of the etcd members is not a pass', () => {
    const s = withMgmt(hazards, (x) => {
      delete x.etcd;
      x.manifest.parts = x.manifest.parts.filter((p) => p !== 'resources' && p !== 'etcd');
    });
    expect(run('capi.tcp-etcd-audit', s)).toMatchObject({ kind: 'skipped' });
  });

  it('capi.tcp-etcd-audit: a paused TCP passes while kubeadm members remain; unpaused once none remains passes too', () => {
    const paused = structuredClone(hazards);
    const tcp = paused.objects.find((o) => o.kind === 'TalosControlPlane')!;
    tcp.metadata.annotations = { 'cluster.x-k8s.io/paused': 'true' };
    expect(
      findings(run('capi.tcp-etcd-audit', withMgmt(paused))).some((f) => /not paused/.test(f.message)),
    ).toBe(false);
    const adoptedTcp = adopted();
    const t = adoptedTcp.objects.find((o) => o.kind === 'TalosControlPlane')!;
    delete t.metadata.annotations;
    // Unpaused with kubeadm members still there: the finding.
    expect(
      findings(run('capi.tcp-etcd-audit', withMgmt(adoptedTcp)))
        .map((f) => f.message)
        .join(),
    ).toMatch(/not paused/);
  });
});
