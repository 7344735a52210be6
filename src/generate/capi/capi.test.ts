import { createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { deriveFacts } from '../../facts/derive.js';
import { labCluster } from '../../facts/testing-builders.js';
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
  infra: 'proxmox' | 'vsphere' = 'proxmox',
): GeneratorResult {
  const s = labCluster();
  bend(s);
  const r = deriveTalosValues(deriveFacts(s, { talosVersion, provisioner: 'capi', infra }));
  if (r.kind !== 'ok') throw new Error('missing');
  const isCp = (n: KubeObject) => n.metadata.labels?.['node-role.kubernetes.io/control-plane'] !== undefined;
  return capiArtifacts(r.values, bundle, opts, {
    infra,
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

/** Two pools on labCluster's workers: worker-1 in "general", the others in "data" with a taint. */
function withPools(s: Snapshot): void {
  withCapacity(s);
  for (const n of s.resources.nodes) {
    if (!n.metadata.name.startsWith('worker-')) continue;
    const data = n.metadata.name !== 'worker-1';
    n.metadata.labels = { ...n.metadata.labels, 'lab.example/pool': data ? 'data' : 'general' };
    if (data)
      n.spec = { ...n.spec, taints: [{ key: 'lab.example/dedicated', value: 'data', effect: 'NoSchedule' }] };
  }
}

const clusterObjects = (r: GeneratorResult) => objects(files(r).get('capi/cluster.yaml')!);
const patchDocs = (text: string) => parseAllDocuments(text).map((d) => d.toJS() as Doc);

describe('Cluster API worker pools', () => {
  for (const version of ['v1.13.9', 'v1.14.0-rc.1']) {
    it(`Talos ${version}: one MachineDeployment, template and TalosConfigTemplate per pool, labels and taints carried`, () => {
      const objs = clusterObjects(run(version, capiOptionsFromFlags(FLAGS), withPools));
      for (const o of objs) expect(crds.validate(o), `${o['kind']} ${o['metadata']?.name}`).toEqual([]);
      const mds = objs.filter((o) => o['kind'] === 'MachineDeployment');
      expect(mds).toHaveLength(2);
      const replaces = mds.map((md) => md['metadata'].annotations['ferry.dev/replaces']);
      expect(replaces.sort()).toEqual(['worker-1', 'worker-2,worker-3,worker-4,worker-5']);
      for (const md of mds) {
        const spec = md['spec'].template.spec;
        const tct = objs.find(
          (o) => o['kind'] === 'TalosConfigTemplate' && o['metadata'].name === spec.bootstrap.configRef.name,
        )!;
        const tmpl = objs.find(
          (o) => o['kind'] === 'ProxmoxMachineTemplate' && o['metadata'].name === spec.infrastructureRef.name,
        )!;
        expect(tct, 'its TalosConfigTemplate').toBeDefined();
        expect(tmpl, 'its machine template').toBeDefined();
        expect(md['metadata'].annotations['machineset.cluster.x-k8s.io/skip-preflight-checks']).toBe(
          'ControlPlaneIsStable',
        );
        const patches: string[] = tct['spec'].template.spec.strategicPatches;
        for (const p of patches) expect(validateTalosDocuments(patchDocs(p), version, 'patch')).toEqual([]);
        const last = patches[patches.length - 1]!;
        const data = md['metadata'].annotations['ferry.dev/replaces'] !== 'worker-1';
        expect(last).toContain(`lab.example/pool: ${data ? 'data' : 'general'}`);
        if (data) expect(last).toMatch(/lab\.example\/dedicated: data:NoSchedule/);
        else expect(last).not.toMatch(/dedicated/);
      }
      // Distinct names: one pool's objects never overwrite another's.
      const named = objs.map((o) => `${o['kind']}/${o['metadata'].name}`);
      expect(new Set(named).size).toBe(named.length);
    });
  }

  it('the example: pool "data" (worker-3..5) keeps lab.example/pool, the StatefulSet selector', async () => {
    const { prepareContext } = await import('../inputs.js');
    const { generateCapi } = await import('./generator.js');
    const example = join(import.meta.dirname, '../../../examples/lab-cluster');
    const { ctx } = await prepareContext({
      snapshotPath: example,
      pkiDir: join(example, 'pki'),
      outDir: '/nonexistent',
      target: { provisioner: 'capi', infra: 'proxmox' },
      bootstrapToken: 'q1w2e3.a1s2d3f4g5h6j7k8',
    });
    const objs = clusterObjects(
      await generateCapi({ ...ctx, options: { ...ctx.options, capi: capiOptionsFromFlags(FLAGS) } }),
    );
    const mds = objs.filter((o) => o['kind'] === 'MachineDeployment');
    const data = mds.find(
      (md) => md['metadata'].annotations['ferry.dev/replaces'] === 'worker-3,worker-4,worker-5',
    );
    expect(data, mds.map((m) => m['metadata'].name).join(', ')).toBeDefined();
    const tct = objs.find(
      (o) =>
        o['kind'] === 'TalosConfigTemplate' &&
        o['metadata'].name === data!['spec'].template.spec.bootstrap.configRef.name,
    )!;
    expect(tct['spec'].template.spec.strategicPatches.at(-1)).toContain('lab.example/pool: data');
  });
});

describe('Cluster API Talos settings (install disk, interfaces, VIP/DHCP, CCM, API access, rotation)', () => {
  const TALOS_FLAGS = {
    ...FLAGS,
    'capi-install-disk': '/dev/sda',
    'capi-link': 'eth0',
    'capi-dhcp': true,
    'capi-vip': '10.20.0.5',
  };
  for (const version of ['v1.13.9', 'v1.14.0-rc.1']) {
    it(`Talos ${version}: the control-plane and worker patches carry them, valid for the release`, () => {
      const objs = clusterObjects(run(version, capiOptionsFromFlags(TALOS_FLAGS), withPools));
      const tcp = objs.find((o) => o['kind'] === 'TalosControlPlane')!;
      const cpPatch: string = tcp['spec'].controlPlaneConfig.controlplane.strategicPatches[1];
      const wPatch: string = objs.find((o) => o['kind'] === 'TalosConfigTemplate')!['spec'].template.spec
        .strategicPatches[1];
      const cp = patchDocs(cpPatch);
      const w = patchDocs(wPatch);
      expect(validateTalosDocuments(cp, version, 'patch')).toEqual([]);
      expect(validateTalosDocuments(w, version, 'patch')).toEqual([]);
      const kind = (docs: Doc[], k: string) => docs.find((d) => d['kind'] === k);
      const v1 = (docs: Doc[]) => docs.find((d) => d['version'] === 'v1alpha1')!;
      for (const docs of [cp, w]) {
        expect(v1(docs)['cluster'].externalCloudProvider).toEqual({ enabled: true });
        expect(kind(docs, 'DHCPv4Config')).toMatchObject({ name: 'eth0' });
        const kubeletArgs =
          version === 'v1.13.9'
            ? v1(docs)['machine'].kubelet.extraArgs
            : kind(docs, 'KubeletConfig')!['extraArgs'];
        expect(kubeletArgs).toEqual({ 'cloud-provider': 'external', 'rotate-server-certificates': 'true' });
      }
      expect(kind(cp, 'Layer2VIPConfig')).toMatchObject({ name: '10.20.0.5', link: 'eth0' });
      expect(kind(w, 'Layer2VIPConfig')).toBeUndefined();
      const access = { allowedRoles: ['os:reader'], allowedKubernetesNamespaces: ['kube-system'] };
      if (version === 'v1.13.9') {
        expect(v1(cp)['machine'].features.kubernetesTalosAPIAccess).toEqual({ enabled: true, ...access });
        expect(v1(w)['machine'].features).toBeUndefined();
        expect(v1(cp)['machine'].install).toEqual({ disk: '/dev/sda' });
      } else {
        expect(kind(cp, 'KubeTalosAPIAccessConfig')).toMatchObject(access);
        expect(kind(w, 'KubeTalosAPIAccessConfig')).toBeUndefined();
        expect(kind(cp, 'UnattendedInstall')!['provisioning'].diskSelector.match).toBe(
          'disk.dev_path == "/dev/sda"',
        );
      }
    });
  }

  it('without the flags: no VIP, DHCP or install disk, but the CCM settings stay (providerID, H11)', () => {
    const objs = clusterObjects(run('v1.13.9', capiOptionsFromFlags(FLAGS)));
    const tcp = objs.find((o) => o['kind'] === 'TalosControlPlane')!;
    const cp = patchDocs(tcp['spec'].controlPlaneConfig.controlplane.strategicPatches[1]);
    expect(cp.map((d) => d['kind'] ?? 'v1alpha1')).toEqual(['v1alpha1']);
    expect(cp[0]!['cluster'].externalCloudProvider.enabled).toBe(true);
    expect(cp[0]!['machine'].install).toBeUndefined();
  });

  it('the kit holds the talos-ccm values and the command that installs them', () => {
    const a = files(run('v1.13.9', capiOptionsFromFlags(FLAGS))).get('capi/talos-ccm-values.yaml')!;
    expect(a.content).toMatch(
      /helm upgrade --install talos-cloud-controller-manager oci:\/\/ghcr\.io\/siderolabs\/charts\/talos-cloud-controller-manager --version \S+ -n kube-system -f capi\/talos-ccm-values\.yaml/,
    );
    expect(parse(a.content)).toMatchObject({ enabledControllers: ['cloud-node', 'node-csr-approval'] });
  });

  it('bad Talos flags are usage errors', () => {
    expect(() => capiOptionsFromFlags({ 'capi-vip': '10.20.0.5' })).toThrow(/--capi-link/);
    expect(() => capiOptionsFromFlags({ 'capi-link': 'eth0', 'capi-vip': 'vip' })).toThrow(/IP address/);
    expect(() => capiOptionsFromFlags({ 'capi-install-disk': 'sda' })).toThrow(/device path/);
  });
});

describe('Cluster API on vSphere (CAPV v1.16)', () => {
  const VSPHERE = {
    'vsphere-server': 'vcenter.lab.example',
    'vsphere-thumbprint': 'AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD',
    'vsphere-credentials-secret': 'lab-vsphere-credentials',
    'vsphere-datacenter': 'dc1',
    'vsphere-datastore': 'ds1',
    'vsphere-folder': 'talos',
    'vsphere-resource-pool': '/dc1/host/cluster1/Resources',
    'vsphere-template': 'talos-v1.13.9-vmware',
    'vsphere-network': 'VM Network',
  };
  const STATIC = {
    ...VSPHERE,
    'vsphere-ipv4-addresses': '10.20.0.100-10.20.0.120',
    'vsphere-ipv4-prefix': '24',
    'vsphere-ipv4-gateway': '10.20.0.1',
    'vsphere-dns-servers': '10.20.0.2',
  };

  it('static addresses: identity, cluster, IPAM pool and templates, all CRD-valid and referenced', () => {
    const r = run('v1.13.9', capiOptionsFromFlags(STATIC), withPools, 'vsphere');
    const objs = clusterObjects(r);
    expect(objs.map((o) => o['kind'])).toEqual([
      'Cluster',
      'VSphereClusterIdentity',
      'VSphereCluster',
      'InClusterIPPool',
      'VSphereMachineTemplate',
      'VSphereMachineTemplate',
      'VSphereMachineTemplate',
      'TalosControlPlane',
      'TalosConfigTemplate',
      'MachineDeployment',
      'TalosConfigTemplate',
      'MachineDeployment',
    ]);
    for (const o of objs) expect(crds.validate(o), `${o['kind']} ${o['metadata']?.name}`).toEqual([]);
    const by = (k: string) => objs.find((o) => o['kind'] === k)!;
    expect(by('Cluster')['spec'].infrastructureRef).toEqual({
      apiGroup: 'infrastructure.cluster.x-k8s.io',
      kind: 'VSphereCluster',
      name: 'lab',
    });
    expect(by('VSphereCluster')['spec']).toMatchObject({
      server: 'vcenter.lab.example',
      controlPlaneEndpoint: { host: 'k8s-api.lab.example', port: 6443 },
      identityRef: { kind: 'VSphereClusterIdentity', name: by('VSphereClusterIdentity')['metadata'].name },
    });
    expect(by('VSphereClusterIdentity')['metadata'].namespace).toBeUndefined();
    expect(by('TalosControlPlane')['spec'].infrastructureTemplate).toMatchObject({
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
      kind: 'VSphereMachineTemplate',
    });
    const pool = by('InClusterIPPool');
    expect(pool['spec']).toEqual({
      addresses: ['10.20.0.100-10.20.0.120'],
      prefix: 24,
      gateway: '10.20.0.1',
    });
    for (const t of objs.filter((o) => o['kind'] === 'VSphereMachineTemplate')) {
      expect(t['spec'].template.spec.network.devices).toEqual([
        {
          networkName: 'VM Network',
          addressesFromPools: [
            { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool', name: pool['metadata'].name },
          ],
          nameservers: ['10.20.0.2'],
        },
      ]);
      expect(t['spec'].template.spec).toMatchObject({
        template: 'talos-v1.13.9-vmware',
        cloneMode: 'fullClone',
      });
    }
    expect(files(r).has('capi/talos-ccm-values.yaml')).toBe(false);
    if (r.kind === 'ok') expect(r.notes.map((n) => n.message).join('\n')).toMatch(/vsphere:\/\//);
  });

  it('DHCP without an IPAM pool; vSphere sizes from the nodes, flags override', () => {
    const objs = clusterObjects(
      run(
        'v1.14.0-rc.1',
        capiOptionsFromFlags({ ...VSPHERE, 'vsphere-cp-cores': '6' }),
        withCapacity,
        'vsphere',
      ),
    );
    for (const o of objs) expect(crds.validate(o), `${o['kind']} ${o['metadata']?.name}`).toEqual([]);
    expect(objs.some((o) => o['kind'] === 'InClusterIPPool')).toBe(false);
    const [cp, worker] = objs
      .filter((o) => o['kind'] === 'VSphereMachineTemplate')
      .map((o) => o['spec'].template.spec);
    expect(cp.network.devices).toEqual([{ networkName: 'VM Network', dhcp4: true }]);
    expect(cp).toMatchObject({ numCPUs: 6, memoryMiB: 7960, diskGiB: 97 });
    expect(worker).toMatchObject({ numCPUs: 8, memoryMiB: 16016 });
  });

  it('asks for what only the operator knows', () => {
    const r = run(
      'v1.13.9',
      capiOptionsFromFlags({ 'vsphere-ipv4-addresses': '10.20.0.100-10.20.0.120' }),
      withCapacity,
      'vsphere',
    );
    expect(r.kind).toBe('missing');
    if (r.kind !== 'missing') return;
    expect(r.missing.map((m) => m.provideWith.split(' ')[0]).sort()).toEqual([
      '--vsphere-datacenter',
      '--vsphere-dns-servers',
      '--vsphere-ipv4-gateway',
      '--vsphere-ipv4-prefix',
      '--vsphere-network',
      '--vsphere-server',
      '--vsphere-template',
    ]);
  });
});
