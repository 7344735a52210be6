import { createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { labCluster } from '../../../test/facts/builders.js';
import { deriveFacts } from '../../facts/derive.js';
import { writeKubeadmPki } from '../../pki/kubeadm-layout.js';
import type { KubeObject, Snapshot } from '../../snapshot/model.js';
import type { Artifact, GeneratorResult } from '../artifact.js';
import { CrdValidator } from '../schema/crd.js';
import { validateTalosDocuments } from '../schema/talos.js';
import type { TalosSecretsBundle } from '../secrets/bundle.js';
import { buildBundleFromKubeadmPki } from '../secrets/from-kubeadm.js';
import { readTalosSecretsBundle } from '../secrets/read.js';
import { deriveTalosValues } from '../talos/values.js';
import { capiArtifacts } from './generator.js';
import { type CapiOptions, capiOptionsFromFlags } from './options.js';
import { quantityBytes } from './sizes.js';

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML is walked freely in assertions
type Doc = Record<string, any>;

const crds = CrdValidator.fromSchemas();
let tmp: string;
let bundle: TalosSecretsBundle;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ferry-capi-'));
  await writeKubeadmPki(join(tmp, 'pki'), {
    apiserver: { nodeName: 'cp-1', advertiseAddress: '10.20.0.11', dnsNames: [], ipAddresses: [] },
    etcdMembers: [{ name: 'cp-1', ip: '10.20.0.11' }],
    key: { algorithm: 'ECDSA' },
  });
  bundle = (await buildBundleFromKubeadmPki(join(tmp, 'pki'), { bootstrapToken: 'abcdef.0123456789abcdef' }))
    .bundle;
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const FLAGS = {
  'proxmox-source-node': 'pve1',
  'proxmox-template-id': '9000',
  'proxmox-bridge': 'vmbr0',
  'proxmox-ipv4-addresses': '10.20.0.100-10.20.0.120',
  'proxmox-ipv4-prefix': '24',
  'proxmox-ipv4-gateway': '10.20.0.1',
  'proxmox-dns-servers': '10.20.0.2,10.20.0.3',
};

function withCapacity(s: Snapshot): void {
  for (const n of s.resources.nodes) {
    const cp = n.metadata.labels?.['node-role.kubernetes.io/control-plane'] !== undefined;
    n.status = {
      ...n.status,
      capacity: {
        cpu: cp ? '4' : '8',
        memory: cp ? '8148980Ki' : '16393200Ki',
        'ephemeral-storage': '101430960Ki',
      },
    };
  }
}

function run(
  talosVersion: string,
  opts: CapiOptions,
  bend: (s: Snapshot) => void = withCapacity,
): GeneratorResult {
  const s = labCluster();
  bend(s);
  const r = deriveTalosValues(deriveFacts(s, { talosVersion, provisioner: 'capi', infra: 'proxmox' }));
  if (r.kind !== 'ok') throw new Error('missing');
  const isCp = (n: KubeObject) => n.metadata.labels?.['node-role.kubernetes.io/control-plane'] !== undefined;
  return capiArtifacts(r.values, bundle, opts, {
    cpNodes: s.resources.nodes.filter(isCp),
    workerNodes: s.resources.nodes.filter((n) => !isCp(n)),
    generatedBy: ['test'],
  });
}

function files(r: GeneratorResult): Map<string, Artifact> {
  if (r.kind !== 'ok') throw new Error(`missing: ${JSON.stringify(r.missing)}`);
  return new Map(r.artifacts.map((a) => [a.path, a]));
}

const objects = (a: Artifact) => parseAllDocuments(a.content).map((d) => d.toJS() as Doc);

describe('Cluster API manifests', () => {
  for (const version of ['v1.13.9', 'v1.14.0-rc.1']) {
    it(`Talos ${version}: every object validates against its CRD`, () => {
      const f = files(run(version, capiOptionsFromFlags(FLAGS)));
      const objs = objects(f.get('capi/cluster.yaml')!);
      expect(objs.map((o) => o['kind'])).toEqual([
        'Cluster',
        'ProxmoxCluster',
        'ProxmoxMachineTemplate',
        'ProxmoxMachineTemplate',
        'TalosControlPlane',
        'TalosConfigTemplate',
        'MachineDeployment',
      ]);
      for (const o of objs) expect(crds.validate(o), `${o['kind']} ${o['metadata']?.name}`).toEqual([]);
      const tcp = objs.find((o) => o['kind'] === 'TalosControlPlane')!;
      const status = parse(f.get('capi/tcp-status-patch.yaml')!.content);
      expect(status).toEqual({ status: { bootstrapped: true } });
      expect(crds.validate({ ...tcp, ...status })).toEqual([]);
    });

    it(`Talos ${version}: the strategic patches are item 2's patches, valid Talos documents without a hostname`, () => {
      const objs = objects(files(run(version, capiOptionsFromFlags(FLAGS))).get('capi/cluster.yaml')!);
      const tcp = objs.find((o) => o['kind'] === 'TalosControlPlane')!;
      const tct = objs.find((o) => o['kind'] === 'TalosConfigTemplate')!;
      for (const text of [
        tcp['spec'].controlPlaneConfig.controlplane.strategicPatches[0],
        tct['spec'].template.spec.strategicPatches[0],
      ]) {
        const docs = parseAllDocuments(text).map((d) => d.toJS());
        expect(validateTalosDocuments(docs, version, 'patch')).toEqual([]);
        expect(docs.some((d) => d['kind'] === 'HostnameConfig')).toBe(false);
        expect(text).not.toMatch(/PRIVATE KEY/);
      }
      expect(tcp['spec'].controlPlaneConfig.controlplane).toMatchObject({
        generateType: 'controlplane',
        talosVersion: version.startsWith('v1.14') ? 'v1.14' : 'v1.13',
        hostname: { source: 'InfrastructureName' },
      });
    });
  }

  it('adopts without creating: replicas 0, paused TCP, preflight skip, existing endpoint and CIDRs', () => {
    const objs = objects(files(run('v1.13.9', capiOptionsFromFlags(FLAGS))).get('capi/cluster.yaml')!);
    const by = (k: string) => objs.find((o) => o['kind'] === k)!;
    expect(by('TalosControlPlane')['spec'].replicas).toBe(0);
    expect(by('TalosControlPlane')['metadata'].annotations['cluster.x-k8s.io/paused']).toBe('true');
    expect(by('TalosControlPlane')['spec'].rolloutStrategy).toEqual({ type: 'OnDelete' });
    expect(by('MachineDeployment')['spec'].replicas).toBe(0);
    expect(
      by('MachineDeployment')['metadata'].annotations['machineset.cluster.x-k8s.io/skip-preflight-checks'],
    ).toBe('ControlPlaneIsStable');
    expect(by('Cluster')['spec']).toMatchObject({
      controlPlaneEndpoint: { host: 'k8s-api.lab.example', port: 6443 },
      clusterNetwork: {
        pods: { cidrBlocks: ['10.244.0.0/16'] },
        services: { cidrBlocks: ['10.96.0.0/12'] },
        serviceDomain: 'cluster.local',
      },
    });
    expect(by('ProxmoxCluster')['spec']).toMatchObject({
      controlPlaneEndpoint: { host: 'k8s-api.lab.example', port: 6443 },
      ipv4Config: { addresses: ['10.20.0.100-10.20.0.120'], prefix: 24, gateway: '10.20.0.1' },
      dnsServers: ['10.20.0.2', '10.20.0.3'],
    });
  });

  it('VM sizes: the largest node of the role, flags override', () => {
    const sizes = (opts: CapiOptions) => {
      const objs = objects(files(run('v1.13.9', opts)).get('capi/cluster.yaml')!);
      return objs.filter((o) => o['kind'] === 'ProxmoxMachineTemplate').map((o) => o['spec'].template.spec);
    };
    const [cp, worker] = sizes(capiOptionsFromFlags(FLAGS));
    // 8148980Ki = 7958 MiB → next multiple of 8; 101430960Ki ≈ 96.7 GiB → 97.
    expect(cp).toMatchObject({
      numCores: 4,
      memoryMiB: 7960,
      disks: { bootVolume: { disk: 'scsi0', sizeGb: 97 } },
    });
    expect(worker).toMatchObject({ numCores: 8, memoryMiB: 16016 });
    const [cp2] = sizes(
      capiOptionsFromFlags({ ...FLAGS, 'proxmox-cp-cores': '6', 'proxmox-cp-memory-mib': '12288' }),
    );
    expect(cp2).toMatchObject({ numCores: 6, memoryMiB: 12288 });
    expect(quantityBytes('1Gi')).toBe(1024 ** 3);
    expect(quantityBytes('nonsense')).toBeUndefined();
  });

  it('Secrets carry the kubeadm PKI as Cluster API reads it, move-labelled, 0600', () => {
    const a = files(run('v1.13.9', capiOptionsFromFlags(FLAGS))).get('capi/secrets.yaml')!;
    expect(a.mode).toBe(0o600);
    expect(a.secret).toBe(true);
    const secrets = objects(a);
    const get = (name: string) => secrets.find((s) => s['metadata'].name === name)!;
    const dec = (s: Doc, k: string) => Buffer.from(s['data'][k], 'base64').toString('utf8');
    for (const [suffix, ca] of [
      ['ca', bundle.certs.k8s],
      ['etcd', bundle.certs.etcd],
      ['proxy', bundle.certs.k8sAggregator],
    ] as const) {
      const s = get(`lab-${suffix}`);
      expect(s['type']).toBe('cluster.x-k8s.io/secret');
      expect(dec(s, 'tls.crt')).toBe(ca.crt);
      expect(dec(s, 'tls.key')).toBe(ca.key);
      expect(s['metadata'].labels).toEqual({
        'cluster.x-k8s.io/cluster-name': 'lab',
        'clusterctl.cluster.x-k8s.io/move': '',
      });
    }
    const sa = get('lab-sa');
    const pub = createPublicKey(dec(sa, 'tls.crt')).export({ type: 'spki', format: 'der' });
    expect(
      pub.equals(
        createPublicKey(createPrivateKey(dec(sa, 'tls.key'))).export({ type: 'spki', format: 'der' }),
      ),
    ).toBe(true);
    const talos = get('lab-talos');
    expect(talos['metadata'].labels['clusterctl.cluster.x-k8s.io/move']).toBe('');
    const read = readTalosSecretsBundle(dec(talos, 'bundle'));
    expect(read.certs.k8s.crt).toBe(bundle.certs.k8s.crt);
    expect(read.secrets.bootstrapToken).toBe('abcdef.0123456789abcdef');
  });

  it('the hazards are stated with how the plan avoids them', () => {
    const text = files(run('v1.13.9', capiOptionsFromFlags(FLAGS))).get('capi/README.md')!.content;
    expect(text).toMatch(/etcd audit removes members it does not own/);
    expect(text).toMatch(/does not drain/);
    expect(text).toMatch(/paused/);
  });

  it('what only the operator knows is asked for by flag; sizes too when nodes report no capacity', () => {
    const r = run('v1.13.9', {}, () => {});
    expect(r.kind).toBe('missing');
    if (r.kind !== 'missing') return;
    const flags = r.missing.map((m) => m.provideWith.split(' ')[0]);
    for (const f of [
      '--proxmox-source-node',
      '--proxmox-template-id',
      '--proxmox-bridge',
      '--proxmox-ipv4-gateway',
      '--proxmox-cp-cores',
      '--proxmox-worker-memory-mib',
    ]) {
      expect(flags).toContain(f);
    }
    expect(() => capiOptionsFromFlags({ 'proxmox-template-id': 'x' })).toThrow(/positive integer/);
  });
});

describe('Cluster API generator on examples/lab-cluster', () => {
  it('writes valid manifests from the example with the Proxmox flags', async () => {
    const { prepareContext } = await import('../inputs.js');
    const { generateCapi } = await import('./generator.js');
    const example = join(import.meta.dirname, '../../../examples/lab-cluster');
    const { ctx, missing } = await prepareContext({
      snapshotPath: example,
      pkiDir: join(example, 'pki'),
      outDir: '/nonexistent',
      target: { provisioner: 'capi', infra: 'proxmox' },
      bootstrapToken: 'q1w2e3.a1s2d3f4g5h6j7k8',
    });
    expect(missing).toEqual([]);
    const withCapi = { ...ctx, options: { ...ctx.options, capi: capiOptionsFromFlags(FLAGS) } };
    const f = files(await generateCapi(withCapi));
    for (const o of objects(f.get('capi/cluster.yaml')!))
      expect(crds.validate(o), String(o['kind'])).toEqual([]);
    const cp = objects(f.get('capi/cluster.yaml')!).find((o) => o['kind'] === 'ProxmoxMachineTemplate')!;
    // cp-1..3: 4 CPUs, 8136012Ki memory (7946 MiB → 7952), 102626232Ki disk (97.9 GiB → 98).
    expect(cp['spec'].template.spec).toMatchObject({
      numCores: 4,
      memoryMiB: 7952,
      disks: { bootVolume: { sizeGb: 98 } },
    });
    // Not the capi provisioner: nothing.
    expect(await generateCapi({ ...withCapi, target: { ...ctx.target, provisioner: 'manual' } })).toEqual({
      kind: 'ok',
      artifacts: [],
      notes: [],
    });
  });
});
