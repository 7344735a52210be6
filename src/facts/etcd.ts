/**
 * etcd: topology (stacked or external), per-node static pods, versions from every source, members
 * mapped to nodes, leader, alarms, and the flags kubeadm did not set.
 */
import type { EtcdState, KubeObject, SourceRef, StaticPod } from '../snapshot/model.js';
import { canonicalIp, parseHostPort } from '../util/ip.js';
import { compareVersionText, etcdVersionFromTag, imageTag } from '../util/semver.js';
import { extraFlagsFact, instanceOf, instancesFact } from './components.js';
import { decide, known, missingFact } from './decide.js';
import { etcdDefaults, kubeadmContext } from './kubeadm-defaults.js';
import type { Candidate, EtcdFacts, EtcdInstance, EtcdMemberFact, EtcdTopology, Fact } from './model.js';
import { atField, derivedRef, flagRef } from './sources.js';
import { listFlag, type SnapshotView } from './view.js';

const NO_ETCD_STATE =
  'etcd/member-list.json, etcd/endpoint-status.json and etcd/version.json (etcdctl -w json), or a live snapshot with --etcd-endpoints';

export function deriveEtcdFacts(v: SnapshotView): EtcdFacts {
  const etcd = v.snapshot.etcd;
  const declared = v.cc?.etcd.local
    ? { flags: v.cc.etcd.local.extraArgs, source: atField(v.cc.source, 'etcd.local.extraArgs') }
    : undefined;
  const topo = topology(v);
  // kubeadm writes no etcd static pod for an external etcd: "none" is the fact, not a gap to fill.
  const offControlPlanes = topo.value?.mode === 'external' && v.etcds.length === 0 && !declared;
  const external = (key: string, title: string, note: string): Fact<never[]> =>
    known(key, title, [], [derivedRef('etcd.topology: external', topo.provenance)], note);
  return {
    topology: topo,
    instances: offControlPlanes
      ? external(
          'etcd.instances',
          'etcd static pods',
          'external etcd: kubeadm runs no etcd static pod on the control planes',
        )
      : instancesFact(
          'etcd.instances',
          'etcd static pods',
          v.etcds,
          etcdInstance,
          'the etcd static pod manifest(s): manifests/NODE/etcd.yaml, or mirror pods kube-system/etcd-NODE in resources/',
        ),
    version: versionFact(v),
    clusterVersion: etcd?.version?.cluster
      ? known('etcd.clusterVersion', 'etcd cluster version', etcd.version.cluster, [
          etcdVersionRef(etcd, 'etcdcluster'),
        ])
      : missingFact('etcd.clusterVersion', 'etcd cluster version', NO_ETCD_STATE),
    members: members(v),
    leader: leader(etcd),
    alarms: etcd
      ? known('etcd.alarms', 'etcd alarms', etcd.alarms, [atField(etcd.source, 'alarms')])
      : missingFact('etcd.alarms', 'etcd alarms', NO_ETCD_STATE),
    extraArgs: offControlPlanes
      ? external(
          'etcd.extraArgs',
          'etcd flags not set by kubeadm',
          'external etcd: kubeadm runs no etcd, so no kubeadm etcd flag is carried to Talos; the external members’ own flags are not in the snapshot',
        )
      : extraFlagsFact({
          key: 'etcd.extraArgs',
          title: 'etcd flags not set by kubeadm',
          pods: v.etcds,
          declared,
          defaults: etcdDefaults(kubeadmContext(v)),
          what: 'etcd command lines',
          missing: 'the etcd static pod manifest(s), or kubeadm-config.yaml (etcd.local.extraArgs)',
        }),
  };
}

function etcdInstance(pod: StaticPod): EtcdInstance {
  const tag = pod.image ? imageTag(pod.image) : undefined;
  return { ...instanceOf(pod), version: tag ? (etcdVersionFromTag(tag) ?? null) : null };
}

function etcdVersionRef(etcd: EtcdState, field: string): SourceRef {
  return atField(etcd.source, `version.${field}`);
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function topology(v: SnapshotView): Fact<EtcdTopology> {
  const candidates: Candidate<EtcdTopology>[] = [];
  for (const pod of v.apiservers) {
    const servers = listFlag(pod.flags, 'etcd-servers');
    if (!servers) continue;
    const local = servers.every((s) => LOOPBACK.has(parseHostPort(s)?.host ?? ''));
    candidates.push({
      value: { mode: local ? 'stacked' : 'external', servers },
      source: flagRef(pod, 'etcd-servers'),
    });
  }
  const ext = v.cc?.etcd.external;
  if (v.cc && ext) {
    candidates.push({
      value: { mode: 'external', servers: ext.endpoints },
      source: atField(v.cc.source, 'etcd.external'),
    });
  }
  return decide({
    key: 'etcd.topology',
    title: 'etcd topology',
    candidates,
    // Servers differ per node only in form; stacked vs external is what matters.
    equals: (a, b) => a.mode === b.mode,
    reason: 'ferry believes the running kube-apiserver --etcd-servers: it is where the apiserver stores data',
    missing:
      'the kube-apiserver manifest(s) (--etcd-servers) or kubeadm-config.yaml (etcd.local / etcd.external)',
  });
}

function versionFact(v: SnapshotView): Fact<string> {
  const etcd = v.snapshot.etcd;
  const reported: Candidate<string>[] = [];
  if (etcd) {
    for (const ep of etcd.endpoints) {
      if (ep.version)
        reported.push({
          value: ep.version,
          source: { kind: 'etcd', endpoint: ep.endpoint, field: 'version' },
        });
    }
    if (etcd.version?.server)
      reported.push({ value: etcd.version.server, source: etcdVersionRef(etcd, 'etcdserver') });
  }
  const images: Candidate<string>[] = [];
  for (const pod of v.etcds) {
    const tag = pod.image ? imageTag(pod.image) : undefined;
    const ver = tag ? etcdVersionFromTag(tag) : undefined;
    if (ver)
      images.push({
        value: ver,
        source: derivedRef(`image tag of ${pod.image}`, [atField(pod.source, 'image')]),
      });
  }
  const tag = v.cc?.etcd.local?.imageTag;
  const ccVer = tag ? etcdVersionFromTag(tag) : undefined;
  if (v.cc && ccVer) images.push({ value: ccVer, source: atField(v.cc.source, 'etcd.local.imageTag') });
  const candidates = [...reported, ...images];
  const lowest = (cs: Candidate<string>[]) => [...cs].sort((a, b) => compareVersionText(a.value, b.value))[0];
  return decide({
    key: 'etcd.version',
    title: 'etcd server version (lowest running)',
    candidates,
    believe: (cs) => lowest(reported.length > 0 ? reported : cs) ?? cs[0]!,
    reason:
      'sources report different etcd versions (a rolling upgrade, or image tags that do not match what runs); ' +
      'ferry believes the lowest version the members themselves report (else the lowest image), because ' +
      'upgrade and join rules are bound by the oldest member',
    missing: `${NO_ETCD_STATE}; or the etcd static pod manifests (image tag)`,
  });
}

/** Member → node: by name first (kubeadm names members after the node), else by peer URL address. */
function matchNode(
  v: SnapshotView,
  name: string,
  peerURLs: string[],
): { node: string; by: 'name' | 'address' } | null {
  if (v.nodesByName.has(name)) return { node: name, by: 'name' };
  if (v.etcds.some((p) => p.node === name)) return { node: name, by: 'name' };
  const hosts = new Set(
    peerURLs
      .map((u) => parseHostPort(u)?.host)
      .filter((h): h is string => !!h)
      .map(canonicalIp),
  );
  for (const nodeName of v.controlPlaneLabelled) {
    const node = v.nodesByName.get(nodeName);
    if (node && nodeAddresses(node).some((a) => hosts.has(a))) return { node: nodeName, by: 'address' };
  }
  for (const pod of v.apiservers) {
    const adv = pod.flags.find((f) => f.name === 'advertise-address')?.value;
    if (pod.node && adv && hosts.has(canonicalIp(adv))) return { node: pod.node, by: 'address' };
  }
  return null;
}

function nodeAddresses(node: KubeObject): string[] {
  const addrs: { address?: unknown }[] = node.status?.addresses ?? [];
  return addrs.filter((a) => typeof a.address === 'string').map((a) => canonicalIp(a.address as string));
}

function members(v: SnapshotView): Fact<EtcdMemberFact[]> {
  const etcd = v.snapshot.etcd;
  if (!etcd) return missingFact('etcd.members', 'etcd members', NO_ETCD_STATE);
  const statusByMember = new Map(etcd.endpoints.filter((e) => e.memberId).map((e) => [e.memberId!, e]));
  const leaderId = etcd.endpoints.find((e) => e.leaderId)?.leaderId;
  const value = etcd.members.map((m): EtcdMemberFact => {
    const st = statusByMember.get(m.id);
    const match = matchNode(v, m.name, m.peerURLs);
    return {
      id: m.id,
      name: m.name,
      peerURLs: m.peerURLs,
      clientURLs: m.clientURLs,
      isLearner: m.isLearner,
      isLeader: leaderId !== undefined && leaderId === m.id,
      node: match?.node ?? null,
      nodeMatch: match?.by ?? null,
      version: st?.version ?? null,
      dbSize: st?.dbSize ?? null,
      dbSizeInUse: st?.dbSizeInUse ?? null,
      raftIndex: st?.raftIndex ?? null,
      errors: st?.errors ?? [],
    };
  });
  return known('etcd.members', 'etcd members', value, [atField(etcd.source, 'members')]);
}

function leader(etcd: EtcdState | undefined): Fact<string | null> {
  const key = 'etcd.leader';
  const title = 'etcd leader (member id)';
  if (!etcd) return missingFact(key, title, NO_ETCD_STATE);
  const candidates: Candidate<string | null>[] = etcd.endpoints
    .filter((e) => e.leaderId !== undefined)
    .map((e) => ({
      value: e.leaderId ?? null,
      source: { kind: 'etcd', endpoint: e.endpoint, field: 'leader' },
    }));
  if (candidates.length === 0) {
    return missingFact(key, title, 'etcd/endpoint-status.json (etcdctl endpoint status --cluster -w json)');
  }
  return decide({
    key,
    title,
    candidates,
    reason:
      'members name different leaders (an election during collection, or a partition); ferry believes the first endpoint',
    missing: '',
  });
}
