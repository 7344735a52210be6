import { describe, expect, it } from 'vitest';
import { describeSource } from '../snapshot/model.js';
import {
  EXTERNAL_ETCD_DIR,
  EXTERNAL_MEMBERS,
  externalEtcdSnapshot,
} from '../snapshot/testing-external-etcd.js';
import { deriveFacts } from './derive.js';
import { CONTROL_PLANES, emptySnapshot, etcdState, flags, labCluster } from './testing-builders.js';

describe('encryption facts', () => {
  it('config file, providers with key names, and the key that writes Secrets', () => {
    const e = deriveFacts(labCluster()).encryption;
    expect(e.providerConfigFile.value).toBe('/etc/kubernetes/enc/config.yaml');
    expect(e.providers.value).toEqual([
      {
        resources: ['secrets'],
        providers: [
          { type: 'aescbc', keyNames: ['key-2023'], keyFingerprints: ['ab'.repeat(32)] },
          { type: 'identity', keyNames: [], keyFingerprints: [] },
        ],
      },
    ]);
    expect(e.secretsWriteKey.value).toEqual({ provider: 'aescbc', keyName: 'key-2023' });
  });

  it('no --encryption-provider-config: providers null, Secrets in plaintext', () => {
    const s = labCluster();
    s.encryption = undefined;
    s.kubeadm.clusterConfiguration!.apiServer.extraArgs = [];
    for (const p of s.staticPods) p.flags = p.flags.filter((f) => f.name !== 'encryption-provider-config');
    const e = deriveFacts(s).encryption;
    expect(e.providerConfigFile.value).toBeNull();
    expect(e.providers.value).toBeNull();
    expect(e.secretsWriteKey.value).toBeNull();
    expect(describeSource(e.providerConfigFile.provenance[0]!)).toMatch(
      /has no --encryption-provider-config/,
    );
  });

  it('the flag names a file the snapshot lacks: providers missing, naming the file', () => {
    const s = labCluster();
    s.encryption = undefined;
    const e = deriveFacts(s).encryption;
    expect(e.providers.value).toBeUndefined();
    expect(e.providers.missing).toBe(
      'encryption-config.yaml: a copy of /etc/kubernetes/enc/config.yaml from a control-plane host',
    );
    expect(e.secretsWriteKey.value).toBeUndefined();
  });

  it('only some apiservers encrypt: conflict', () => {
    const s = labCluster();
    const cp3 = s.staticPods.find((p) => p.component === 'kube-apiserver' && p.node === 'cp-3')!;
    cp3.flags = cp3.flags.filter((f) => f.name !== 'encryption-provider-config');
    const f = deriveFacts(s).encryption.providerConfigFile;
    expect(f.conflict?.candidates.map((c) => c.value)).toEqual([
      '/etc/kubernetes/enc/config.yaml',
      '/etc/kubernetes/enc/config.yaml',
      null,
      '/etc/kubernetes/enc/config.yaml',
    ]);
  });

  it('identity first: Secrets are written in plaintext although keys exist', () => {
    const s = labCluster();
    s.encryption!.resources[0]!.providers.reverse();
    expect(deriveFacts(s).encryption.secretsWriteKey.value).toEqual({ provider: 'identity', keyName: null });
  });
});

describe('etcd facts', () => {
  it('stacked topology, versions agree, members mapped to nodes by name, leader', () => {
    const e = deriveFacts(labCluster()).etcd;
    expect(e.topology.value).toEqual({ mode: 'stacked', servers: ['https://127.0.0.1:2379'] });
    expect(e.version.value).toBe('3.5.16');
    expect(e.version.conflict).toBeUndefined();
    // 3 endpoint statuses + /version + 3 image tags + kubeadm-config imageTag
    expect(e.version.provenance).toHaveLength(8);
    expect(e.clusterVersion.value).toBe('3.5.0');
    expect(e.members.value?.map((m) => [m.name, m.node, m.nodeMatch, m.isLeader])).toEqual([
      ['cp-1', 'cp-1', 'name', false],
      ['cp-2', 'cp-2', 'name', true],
      ['cp-3', 'cp-3', 'name', false],
    ]);
    // uint64 ids above 2^53 stay exact strings
    expect(e.members.value?.[0]?.id).toBe('10276657743932975437');
    expect(e.leader.value).toBe(CONTROL_PLANES[1]!.memberId);
    expect(e.instances.value?.map((i) => i.version)).toEqual(['3.5.16', '3.5.16', '3.5.16']);
    expect(e.extraArgs.value).toEqual([]);
  });

  it('a member renamed away from its node is matched by peer address', () => {
    const s = labCluster();
    s.etcd!.members[2]!.name = 'old-cp-3';
    const m = deriveFacts(s).etcd.members.value?.[2];
    expect(m).toMatchObject({ name: 'old-cp-3', node: 'cp-3', nodeMatch: 'address' });
  });

  it('members on mixed versions: conflict, the lowest reported version believed over image tags', () => {
    const s = labCluster();
    s.etcd = etcdState({ versions: ['3.5.16', '3.5.9', '3.5.16'], version: '3.5.16' });
    const v = deriveFacts(s).etcd.version;
    expect(v.value).toBe('3.5.9');
    expect(v.conflict?.reason).toMatch(/lowest version the members themselves report/);
    expect(v.provenance.map(describeSource)).toEqual(['etcd https://10.20.0.12:2379 version']);
  });

  it('without etcd state the image tags give the version, members are missing', () => {
    const s = labCluster();
    s.etcd = undefined;
    s.kubeadm.clusterConfiguration!.etcd.local!.imageTag = '3.5.15-0';
    const e = deriveFacts(s).etcd;
    expect(e.version.value).toBe('3.5.15');
    expect(e.version.conflict).toBeDefined();
    expect(e.members.value).toBeUndefined();
    expect(e.members.missing).toMatch(/member-list.json/);
    expect(e.clusterVersion.missing).toMatch(/--etcd-endpoints/);
  });

  it('external etcd is recognized from the apiserver flag and kubeadm-config', () => {
    const s = labCluster();
    s.kubeadm.clusterConfiguration!.etcd = { external: { endpoints: ['https://etcd-1.lab.example:2379'] } };
    for (const p of s.staticPods) {
      if (p.component === 'kube-apiserver') {
        p.flags = p.flags.map((f) =>
          f.name === 'etcd-servers' ? { ...f, value: 'https://etcd-1.lab.example:2379' } : f,
        );
      }
    }
    const f = deriveFacts(s);
    expect(f.etcd.topology.value).toEqual({ mode: 'external', servers: ['https://etcd-1.lab.example:2379'] });
    expect(f.apiserver.extraFlags.value?.map((x) => x.name)).toContain('etcd-servers');
  });

  it('etcd flags kubeadm does not set are reported (quota, v2)', () => {
    const s = labCluster();
    for (const p of s.staticPods)
      if (p.component === 'etcd')
        p.flags.push(...flags('--quota-backend-bytes=8589934592', '--enable-v2=true'));
    s.kubeadm.clusterConfiguration!.etcd.local!.extraArgs = flags(
      '--quota-backend-bytes=8589934592',
      '--enable-v2=true',
    );
    const e = deriveFacts(s).etcd.extraArgs;
    expect(e.value).toEqual(flags('--quota-backend-bytes=8589934592', '--enable-v2=true'));
    expect(e.conflict).toBeUndefined();
  });

  it('missing everything', () => {
    const e = deriveFacts(emptySnapshot()).etcd;
    for (const f of [
      e.topology,
      e.instances,
      e.version,
      e.clusterVersion,
      e.members,
      e.leader,
      e.alarms,
      e.extraArgs,
    ]) {
      expect(f.value).toBeUndefined();
      expect(f.missing).toBeTruthy();
    }
  });
});

describe('etcd facts of an external etcd (src/snapshot/fixtures/external-etcd)', () => {
  it('topology external from every apiserver and kubeadm-config; the members are seen, on no Node', async () => {
    const e = deriveFacts(await externalEtcdSnapshot()).etcd;
    expect(e.topology.value).toEqual({
      mode: 'external',
      servers: EXTERNAL_MEMBERS.map(([, url]) => url),
    });
    expect(e.topology.conflict).toBeUndefined();
    expect(e.topology.provenance.map(describeSource)).toEqual([
      ...['cp-1', 'cp-2', 'cp-3'].map(
        (n) =>
          `kube-apiserver@${n} --etcd-servers (${EXTERNAL_ETCD_DIR}/manifests/${n}/kube-apiserver.yaml:1)`,
      ),
      `${EXTERNAL_ETCD_DIR}/kubeadm-config.yaml:3 etcd.external`,
    ]);
    expect(e.members.value?.map((m) => [m.name, m.clientURLs[0], m.node, m.version])).toEqual(
      EXTERNAL_MEMBERS.map(([name, url]) => [name, url, null, '3.5.21']),
    );
    expect(e.version.value).toBe('3.5.21');
  });

  it('no etcd static pod and no kubeadm etcd flag is a known "none", not a gap to fill', async () => {
    const e = deriveFacts(await externalEtcdSnapshot()).etcd;
    expect(e.instances).toMatchObject({ value: [], note: expect.stringMatching(/^external etcd: /) });
    expect(e.instances.missing).toBeUndefined();
    expect(e.extraArgs).toMatchObject({ value: [], note: expect.stringMatching(/^external etcd: /) });
    expect(e.extraArgs.provenance.map(describeSource)[0]).toMatch(/^etcd\.topology: external \(from /);
    // A stacked cluster without manifests still says what to provide.
    const s = labCluster();
    s.staticPods = s.staticPods.filter((p) => p.component !== 'etcd');
    expect(deriveFacts(s).etcd.instances.missing).toMatch(/etcd static pod manifest/);
  });
});
