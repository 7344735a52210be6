import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { deriveFacts } from '../../facts/derive.js';
import type { Facts } from '../../facts/model.js';
import { daemonSet, flags, labCluster, node } from '../../facts/testing-builders.js';
import { writeKubeadmPki } from '../../pki/kubeadm-layout.js';
import type { Snapshot } from '../../snapshot/model.js';
import type { Artifact } from '../artifact.js';
import { validateTalosDocuments } from '../schema/talos.js';
import type { TalosSecretsBundle } from '../secrets/bundle.js';
import { buildBundleFromKubeadmPki } from '../secrets/from-kubeadm.js';
import { talosFullArtifacts, talosNodeConfigArtifacts, talosPatchArtifacts } from './generator.js';
import type { TalosValues } from './model.js';
import { deriveTalosValues } from './values.js';

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML is walked freely in assertions
type Doc = Record<string, any>;

const VERSIONS = ['v1.10.9', 'v1.11.6', 'v1.12.11', 'v1.13.9', 'v1.14.0-rc.1'];
const TOKEN = 'abcdef.0123456789abcdef';

let tmp: string;
let bundle: TalosSecretsBundle;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ferry-talos-'));
  await writeKubeadmPki(join(tmp, 'pki'), {
    apiserver: {
      nodeName: 'cp-1',
      advertiseAddress: '10.20.0.11',
      dnsNames: ['k8s-api.lab.example'],
      ipAddresses: [],
    },
    etcdMembers: [{ name: 'cp-1', ip: '10.20.0.11' }],
    key: { algorithm: 'ECDSA' },
    serviceAccountKey: { algorithm: 'ECDSA' },
  });
  bundle = (await buildBundleFromKubeadmPki(join(tmp, 'pki'), { bootstrapToken: TOKEN })).bundle;
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

function facts(talosVersion: string, bend: (s: Snapshot) => void = () => {}): Facts {
  const s = labCluster();
  bend(s);
  return deriveFacts(s, { talosVersion });
}

function values(f: Facts): TalosValues {
  const r = deriveTalosValues(f);
  if (r.kind !== 'ok') throw new Error(`missing: ${JSON.stringify(r.missing)}`);
  return r.values;
}

function docsOf(a: Artifact): Doc[] {
  return parseAllDocuments(a.content).map((d) => d.toJS());
}

/** The complete config of every planned node (control planes first) and talos/machines.json. */
function nodeConfigs(v: TalosValues, b: TalosSecretsBundle = bundle): Artifact[] {
  return talosNodeConfigArtifacts(v, b, ['test']);
}

function patch(v: TalosValues, path: string): Doc[] {
  const a = talosPatchArtifacts(v, []).find((x) => x.path === path);
  if (!a) throw new Error(`no ${path}`);
  return docsOf(a);
}

const byKind = (docs: Doc[], kind: string) => docs.find((d) => d['kind'] === kind);
const legacy = (docs: Doc[]) => docs.find((d) => d['version'] === 'v1alpha1')!;

describe('every generated document validates against its Talos schema', () => {
  for (const version of VERSIONS) {
    it(`Talos ${version}: patches (patch mode) and complete configs (full mode)`, () => {
      const v = values(facts(version));
      const patches = talosPatchArtifacts(v, ['test']);
      expect(patches.length).toBeGreaterThanOrEqual(5);
      for (const a of patches)
        expect(validateTalosDocuments(docsOf(a), version, 'patch'), a.path).toEqual([]);
      const full = [
        ...nodeConfigs(v).filter((a) => a.path.endsWith('.yaml')),
        ...talosFullArtifacts(v, bundle, ['test']),
      ];
      expect(full.length).toBeGreaterThanOrEqual(4);
      for (const a of full) expect(validateTalosDocuments(docsOf(a), version, 'full'), a.path).toEqual([]);
    });
  }

  it('the form follows the version: a ≤1.13 patch is not valid for 1.14 and vice versa', () => {
    const old = patch(values(facts('v1.13.9')), 'talos/controlplane-patch.yaml');
    expect(validateTalosDocuments(old, 'v1.14.0-rc.1', 'patch').length).toBeGreaterThan(0);
    const neu = patch(values(facts('v1.14.0-rc.1')), 'talos/controlplane-patch.yaml');
    expect(validateTalosDocuments(neu, 'v1.13.9', 'patch').length).toBeGreaterThan(0);
  });
});

describe('control-plane patch carries the cluster', () => {
  it('legacy form: endpoint, name, CIDRs, DNS domain, SANs, CNI none, CoreDNS off, kube-proxy off, issuers', () => {
    const f = facts('v1.13.9');
    const c = legacy(patch(values(f), 'talos/controlplane-patch.yaml'))['cluster'];
    expect(c.clusterName).toBe(f.cluster.name.value);
    expect(c.controlPlane.endpoint).toBe('https://k8s-api.lab.example:6443');
    expect(c.network.podSubnets).toEqual(f.network.podSubnets.value);
    expect(c.network.serviceSubnets).toEqual(f.network.serviceSubnets.value);
    expect(c.network.dnsDomain).toBe('cluster.local');
    expect(c.network.cni).toEqual({ name: 'none' });
    expect(c.coreDNS).toEqual({ disabled: true });
    // The builder's cluster has Cilium and no kube-proxy DaemonSet.
    expect(c.proxy).toEqual({ disabled: true });
    expect(c.apiServer.certSANs).toContain('k8s-api.lab.example');
    expect(c.apiServer.extraArgs['service-account-issuer']).toEqual([
      'https://k8s-api.lab.example:6443',
      'https://kubernetes.default.svc.cluster.local',
    ]);
    expect(c.apiServer.extraArgs['api-audiences']).toBe(
      'https://k8s-api.lab.example:6443,https://kubernetes.default.svc.cluster.local',
    );
    expect(c.apiServer.extraArgs['oidc-issuer-url']).toBe('https://sso.lab.example/realms/k8s');
    expect(c.apiServer.admissionControl[0].configuration.defaults.enforce).toBe('privileged');
    expect(c.allowSchedulingOnControlPlanes).toBe(true);
  });

  it('Talos ≤1.12 takes one issuer string and warns about the old one', () => {
    const r = deriveTalosValues(facts('v1.12.11'));
    if (r.kind !== 'ok') throw new Error('missing');
    const c = legacy(patch(r.values, 'talos/controlplane-patch.yaml'))['cluster'];
    expect(c.apiServer.extraArgs['service-account-issuer']).toBe('https://k8s-api.lab.example:6443');
    expect(r.notes.some((n) => n.message.includes('one --service-account-issuer'))).toBe(true);
  });

  it('multi-document form: Kube* documents, flannel deleted, proxy and CoreDNS disabled explicitly', () => {
    const docs = patch(values(facts('v1.14.0-rc.1')), 'talos/controlplane-patch.yaml');
    expect(byKind(docs, 'KubeNetworkConfig')).toMatchObject({
      podSubnets: ['10.244.0.0/16'],
      serviceSubnets: ['10.96.0.0/12'],
      dnsDomain: 'cluster.local',
    });
    expect(byKind(docs, 'KubeFlannelCNIConfig')).toEqual({
      apiVersion: 'v1alpha1',
      kind: 'KubeFlannelCNIConfig',
      $patch: 'delete',
    });
    expect(byKind(docs, 'KubeProxyConfig')?.['enabled']).toBe(false);
    expect(byKind(docs, 'KubeCoreDNSConfig')?.['enabled']).toBe(false);
    expect(byKind(docs, 'KubeServiceAccountConfig')).toMatchObject({
      issuer: { issuerURL: 'https://k8s-api.lab.example:6443' },
      accepted: { issuers: ['https://kubernetes.default.svc.cluster.local'] },
    });
    expect(byKind(docs, 'KubeAPIServerConfig')?.['certExtraSANs']).toContain('k8s-api.lab.example');
    const jwt = byKind(docs, 'KubeAuthenticationConfig')?.['configuration']?.['jwt'];
    expect(jwt).toEqual([
      {
        issuer: { url: 'https://sso.lab.example/realms/k8s', audiences: ['kubernetes'] },
        claimMappings: { username: { claim: 'sub', prefix: 'https://sso.lab.example/realms/k8s#' } },
      },
    ]);
    expect(legacy(docs)).toEqual({
      version: 'v1alpha1',
      cluster: { etcd: { image: 'gcr.io/etcd-development/etcd:v3.5.16' } },
    });
  });

  it('kube-proxy stays enabled where the cluster runs it', () => {
    const f = facts('v1.13.9', (s) =>
      s.resources.daemonsets.push(
        daemonSet('kube-system', 'kube-proxy', {
          image: 'registry.k8s.io/kube-proxy:v1.32.4',
          selector: { 'k8s-app': 'kube-proxy' },
        }),
      ),
    );
    const c = legacy(patch(values(f), 'talos/controlplane-patch.yaml'))['cluster'];
    expect(c.proxy).toEqual({ disabled: false, image: 'registry.k8s.io/kube-proxy:v1.32.4' });
  });

  it('scheduling and taints as found: tainted control planes stay unschedulable', () => {
    const taint = { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' };
    const bend = (s: Snapshot) => {
      s.resources.nodes = s.resources.nodes.map((n) =>
        n.metadata.labels?.['node-role.kubernetes.io/control-plane'] !== undefined
          ? { ...n, spec: { ...n.spec, taints: [taint] } }
          : n,
      );
    };
    expect(
      legacy(patch(values(facts('v1.13.9', bend)), 'talos/controlplane-patch.yaml'))['cluster']
        .allowSchedulingOnControlPlanes,
    ).toBe(false);
    const node14 = byKind(
      patch(values(facts('v1.14.0-rc.1', bend)), 'talos/controlplane-patch.yaml'),
      'KubeNodeConfig',
    );
    expect(node14?.['taints']).toBeUndefined();
    const open14 = byKind(
      patch(values(facts('v1.14.0-rc.1')), 'talos/controlplane-patch.yaml'),
      'KubeNodeConfig',
    );
    expect(open14?.['taints']).toEqual({ 'node-role.kubernetes.io/control-plane': { $patch: 'delete' } });
  });

  it('etcd is pinned to the cluster etcd version: same repository when the release ships that minor', () => {
    expect(values(facts('v1.13.9')).etcd.image.value).toBe('gcr.io/etcd-development/etcd:v3.5.16');
    const f = facts('v1.13.9', (s) => {
      s.etcd!.version = { server: '3.6.12', cluster: '3.6.0' };
      for (const e of s.etcd!.endpoints) e.version = '3.6.12';
      for (const p of s.staticPods) if (p.component === 'etcd') p.image = 'registry.k8s.io/etcd:3.6.12-0';
    });
    expect(values(f).etcd.image.value).toBe('registry.k8s.io/etcd:v3.6.12');
  });
});

describe('flags Talos does not take are reported, never dropped silently', () => {
  it('every non-default apiserver flag is either carried or named in a note', () => {
    const f = facts('v1.14.0-rc.1', (s) => {
      for (const p of s.staticPods) {
        if (p.component === 'kube-apiserver') {
          p.flags.push(
            ...flags(
              '--tls-min-version=VersionTLS12',
              '--service-node-port-range=30000-33000',
              '--audit-policy-file=/etc/kubernetes/audit.yaml',
            ),
          );
        }
      }
    });
    const r = deriveTalosValues(f);
    if (r.kind !== 'ok') throw new Error('missing');
    const api = byKind(patch(r.values, 'talos/controlplane-patch.yaml'), 'KubeAPIServerConfig');
    const carried = Object.keys(api?.['extraArgs'] ?? {});
    expect(carried).toContain('service-node-port-range');
    const text = r.notes.map((n) => n.message).join('\n');
    for (const flag of f.apiserver.extraFlags.value ?? []) {
      if (flag.name.startsWith('oidc-')) continue; // carried as the JWT authenticator
      const reported = text.includes(`--${flag.name}=`);
      expect(carried.includes(flag.name) || reported, flag.name).toBe(true);
    }
    expect(carried).not.toContain('tls-min-version');
    expect(text).toMatch(/--tls-min-version=VersionTLS12 is not carried: Talos rejects it/);
    expect(text).toMatch(/--encryption-provider-config=.* is not carried/);
    expect(text).toMatch(/--audit-policy-file=.* is not carried/);
  });
});

describe('the anonymous-auth decision mirrors the cluster', () => {
  const closed = (s: Snapshot) => {
    for (const p of s.staticPods)
      if (p.component === 'kube-apiserver') p.flags.push({ name: 'anonymous-auth', value: 'false' });
  };
  it('≤1.13: explicit anonymous-auth extra arg', () => {
    expect(
      legacy(patch(values(facts('v1.13.9')), 'talos/controlplane-patch.yaml'))['cluster'].apiServer.extraArgs[
        'anonymous-auth'
      ],
    ).toBe('true');
    expect(
      legacy(patch(values(facts('v1.13.9', closed)), 'talos/controlplane-patch.yaml'))['cluster'].apiServer
        .extraArgs['anonymous-auth'],
    ).toBe('false');
  });
  it('1.14: anonymous refused → KubeAuthenticationConfig deleted, OIDC back to flags', () => {
    const docs = patch(values(facts('v1.14.0-rc.1', closed)), 'talos/controlplane-patch.yaml');
    expect(byKind(docs, 'KubeAuthenticationConfig')).toEqual({
      apiVersion: 'v1alpha1',
      kind: 'KubeAuthenticationConfig',
      $patch: 'delete',
    });
    expect(byKind(docs, 'KubeAPIServerConfig')?.['extraArgs']).toMatchObject({
      'anonymous-auth': 'false',
      'oidc-client-id': 'kubernetes',
    });
  });
});

describe('kubelet and nodes', () => {
  it('kubelet settings come from the kubelet ConfigMap; protected keys stay out', () => {
    const r = deriveTalosValues(facts('v1.13.9'));
    if (r.kind !== 'ok') throw new Error('missing');
    const kubelet = legacy(patch(r.values, 'talos/worker-patch.yaml'))['machine'].kubelet;
    expect(kubelet.extraConfig).toEqual({ maxPods: 110, evictionHard: { 'memory.available': '100Mi' } });
    expect(kubelet.clusterDNS).toEqual(['10.96.0.10']);
    expect(r.notes.some((n) => n.message.includes('cgroupDriver systemd is not carried'))).toBe(true);
    expect(r.notes.some((n) => n.message.includes('staticPodPath'))).toBe(true);
  });

  it("carries a graceful-shutdown period the cluster set, not kubeadm's 0s (off), which would drop Talos's own", () => {
    const r = deriveTalosValues(
      facts('v1.13.9', (s) => {
        s.kubelet!.spec['shutdownGracePeriod'] = '60s';
        s.kubelet!.spec['shutdownGracePeriodCriticalPods'] = '0s';
      }),
    );
    if (r.kind !== 'ok') throw new Error('missing');
    const kubelet = legacy(patch(r.values, 'talos/worker-patch.yaml'))['machine'].kubelet;
    expect(kubelet.extraConfig.shutdownGracePeriod).toBe('60s');
    expect(kubelet.extraConfig).not.toHaveProperty('shutdownGracePeriodCriticalPods');
  });

  it('labels only some workers have go to group patches; shared ones to the worker patch', () => {
    const f = facts('v1.13.9', (s) => {
      s.resources.nodes = s.resources.nodes.map((n) => {
        if (!n.metadata.name.startsWith('worker-')) return n;
        const i = Number(n.metadata.name.slice(7));
        return {
          ...n,
          metadata: {
            ...n.metadata,
            labels: {
              ...n.metadata.labels,
              'lab.example/env': 'prod',
              'lab.example/pool': i <= 2 ? 'a' : 'b',
            },
          },
        };
      });
    });
    const v = values(f);
    expect(legacy(patch(v, 'talos/worker-patch.yaml'))['machine'].nodeLabels).toEqual({
      'lab.example/env': 'prod',
    });
    expect(v.workers.groups.map((g) => g.nodes)).toEqual([
      ['worker-1', 'worker-2'],
      ['worker-3', 'worker-4', 'worker-5'],
    ]);
    const g = talosPatchArtifacts(v, []).filter((a) => a.path.startsWith('talos/worker-groups/'));
    expect(g.map((a) => legacy(docsOf(a))['machine'].nodeLabels)).toEqual([
      { 'lab.example/pool': 'a' },
      { 'lab.example/pool': 'b' },
    ]);
    // Each worker replacement boots a complete config with its pool's labels, and no pinned hostname.
    const configs = new Map(nodeConfigs(v).map((a) => [a.path, a]));
    const w4 = docsOf(configs.get('talos/full/replacing-worker-4.yaml')!);
    expect(legacy(w4)['machine'].type).toBe('worker');
    expect(legacy(w4)['machine'].nodeLabels).toEqual({ 'lab.example/env': 'prod', 'lab.example/pool': 'b' });
    expect(legacy(w4)['machine'].network?.hostname).toBeUndefined();
    expect(byKind(w4, 'HostnameConfig')).toEqual({
      apiVersion: 'v1alpha1',
      kind: 'HostnameConfig',
      auto: 'stable',
    });
    const index = JSON.parse(configs.get('talos/machines.json')!.content);
    expect(index.machines.find((m: Doc) => m['replaces'] === 'worker-4')).toEqual({
      role: 'worker',
      replaces: 'worker-4',
      hostname: null,
      config: 'talos/full/replacing-worker-4.yaml',
      patches: ['talos/worker-patch.yaml', `talos/worker-groups/${v.workers.groups[1]!.name}.yaml`],
    });
    expect(index.machines.map((m: Doc) => m['config'])).toEqual(
      [...configs.keys()].filter((p) => p.startsWith('talos/full/')),
    );
  });
});

describe('hostname rule', () => {
  it('control-plane replacements never take a live etcd member or node name', () => {
    const f = facts('v1.13.9', (s) => {
      s.resources.nodes.push(node('talos-cp-1', { ip: '10.20.0.99' }));
    });
    const v = values(f);
    const names = v.controlPlane.replacements.map((r) => r.hostname.value);
    expect(names).toEqual(['talos-cp-1-2', 'talos-cp-2', 'talos-cp-3']);
    const members = f.etcd.members.value!.map((m) => m.name);
    for (const n of names) expect(members).not.toContain(n);
    const nodePatch = talosPatchArtifacts(v, []).find((a) => a.path === 'talos/nodes/talos-cp-1-2.yaml')!;
    expect(byKind(docsOf(nodePatch), 'HostnameConfig')).toEqual({
      apiVersion: 'v1alpha1',
      kind: 'HostnameConfig',
      hostname: 'talos-cp-1-2',
      auto: 'off',
    });
  });

  it('Talos ≤1.11 pins the hostname in machine.network', () => {
    const v = values(facts('v1.11.6'));
    const a = talosPatchArtifacts(v, []).find((x) => x.path === 'talos/nodes/talos-cp-2.yaml')!;
    expect(legacy(docsOf(a))['machine'].network).toEqual({ hostname: 'talos-cp-2' });
  });
});

describe('what cannot be derived is asked for', () => {
  it('no kubelet configuration and no etcd member list: missing inputs, no artifacts', () => {
    const r = deriveTalosValues(
      facts('v1.13.9', (s) => {
        delete s.kubelet;
        delete s.etcd;
      }),
    );
    expect(r.kind).toBe('missing');
    if (r.kind !== 'missing') return;
    const what = r.missing.map((m) => `${m.what} → ${m.provideWith}`).join('\n');
    expect(what).toMatch(/KubeletConfiguration/);
    expect(what).toMatch(/etcd members/);
  });

  it('an admission configuration file ferry cannot see makes PodSecurity missing', () => {
    const r = deriveTalosValues(
      facts('v1.13.9', (s) => {
        for (const p of s.staticPods)
          if (p.component === 'kube-apiserver')
            p.flags.push({ name: 'admission-control-config-file', value: '/etc/kubernetes/adm.yaml' });
      }),
    );
    expect(r.kind).toBe('missing');
    if (r.kind === 'missing') expect(r.missing.some((m) => m.what.includes('PodSecurity'))).toBe(true);
  });
});

describe('provenance and secrets', () => {
  it('every patch value that came from the cluster says where, in the file and in provenance', () => {
    const f = facts('v1.13.9');
    const a = talosPatchArtifacts(values(f), [])[0]!;
    expect(a.provenance['cluster.network.podSubnets']).toEqual(f.network.podSubnets.provenance);
    expect(a.content).toMatch(
      /# from: kube-apiserver@cp-1 --service-cluster-ip-range[^\n]*\n(\s*#[^\n]*\n)*\s*serviceSubnets:/,
    );
    expect(a.mode).toBe(0o644);
    expect(a.secret).toBe(false);
  });

  it('patches hold no key material or tokens; complete configs do, 0600', async () => {
    const v = values(facts('v1.14.0-rc.1'));
    for (const a of talosPatchArtifacts(v, [])) {
      expect(a.content).not.toMatch(/PRIVATE KEY/);
      expect(a.content).not.toContain(TOKEN);
    }
    const full = nodeConfigs(v).filter((a) => a.path.endsWith('.yaml'));
    for (const a of full) {
      expect(a.mode).toBe(0o600);
      expect(a.secret).toBe(true);
    }
    const caPem = await readFile(join(tmp, 'pki', 'ca.crt'), 'utf8');
    const cp = docsOf(full[0]!);
    expect(byKind(cp, 'KubeAPIServerCAConfig')?.['issuingCA']?.['cert']).toBe(caPem);
    const legacyFull = docsOf(nodeConfigs(values(facts('v1.13.9')))[0]!);
    expect(Buffer.from(legacy(legacyFull)['cluster'].ca.crt, 'base64').toString('utf8')).toBe(caPem);
    expect(legacy(legacyFull)['cluster'].token).toBe(TOKEN);
  });

  it('the encryption key in complete configs is the bundle key under its Talos name, identity last', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const withKey: TalosSecretsBundle = {
      ...bundle,
      secrets: { ...bundle.secrets, secretboxEncryptionSecret: key },
    };
    const v14 = nodeConfigs(values(facts('v1.14.0-rc.1')), withKey)[0]!;
    expect(byKind(docsOf(v14), 'KubeEtcdEncryptionConfig')?.['config']).toEqual({
      resources: [
        {
          resources: ['secrets'],
          providers: [{ secretbox: { keys: [{ name: 'key2', secret: key }] } }, { identity: {} }],
        },
      ],
    });
    const v13 = nodeConfigs(values(facts('v1.13.9')), withKey)[0]!;
    expect(legacy(docsOf(v13))['cluster'].secretboxEncryptionSecret).toBe(key);
    // Without a key in the bundle: no encryption document, no secret.
    expect(
      byKind(docsOf(nodeConfigs(values(facts('v1.14.0-rc.1')))[0]!), 'KubeEtcdEncryptionConfig'),
    ).toBeUndefined();
  });
});
