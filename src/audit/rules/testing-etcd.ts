/**
 * Test builders for etcd state (what `etcdctl member list / endpoint status / alarm list -w json`
 * and `/version` give a snapshot), matching the control planes of testing-network's buildSnapshot.
 */
import type { EtcdEndpointStatus, EtcdMember, EtcdState } from '../../snapshot/model.js';

export const CONTROL_PLANES: readonly [string, string][] = [
  ['cp-1', '10.0.0.11'],
  ['cp-2', '10.0.0.12'],
  ['cp-3', '10.0.0.13'],
];

/** Member ids as etcd prints them (decimal uint64 strings), one per control plane. */
export const MEMBER_IDS = ['13872586097927091956', '11210328135921524490', '15220748020939207587'];

export function member(name: string, id: string, ip: string, opts: Partial<EtcdMember> = {}): EtcdMember {
  return {
    id,
    name,
    peerURLs: [`https://${ip}:2380`],
    clientURLs: name ? [`https://${ip}:2379`] : [],
    isLearner: false,
    ...opts,
  };
}

export function status(
  m: EtcdMember,
  leaderId: string,
  opts: Partial<EtcdEndpointStatus> = {},
): EtcdEndpointStatus {
  return {
    endpoint: m.clientURLs[0] ?? m.peerURLs[0]!.replace(':2380', ':2379'),
    memberId: m.id,
    leaderId,
    version: '3.5.26',
    dbSize: 50 * 1024 * 1024,
    dbSizeInUse: 30 * 1024 * 1024,
    raftTerm: '3',
    raftIndex: '1000',
    isLearner: m.isLearner,
    errors: [],
    ...opts,
  };
}

/**
 * A healthy etcd of the three control planes: every member started, one leader (cp-1), version
 * `version` everywhere. `edit` adjusts members and statuses before the state is assembled.
 */
export function etcdState(
  opts: {
    version?: string;
    clusterVersion?: string;
    members?: EtcdMember[];
    statuses?: (members: EtcdMember[]) => EtcdEndpointStatus[];
    alarms?: { memberId: string; alarm: string }[];
  } = {},
): EtcdState {
  const version = opts.version ?? '3.5.26';
  const members = opts.members ?? CONTROL_PLANES.map(([n, ip], i) => member(n, MEMBER_IDS[i]!, ip));
  const leader = members[0]!.id;
  const statuses = opts.statuses
    ? opts.statuses(members)
    : members.filter((m) => m.name).map((m) => status(m, leader, { version }));
  const cluster = opts.clusterVersion ?? version.replace(/^(\d+\.\d+)\..*$/, '$1.0');
  return {
    source: { kind: 'file', path: 'fixtures/cluster/etcd' },
    members,
    endpoints: statuses,
    version: { server: version, cluster },
    alarms: opts.alarms ?? [],
  };
}
