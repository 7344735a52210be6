/**
 * Pure mapping from etcd's answers to model.EtcdState. uint64 values (member IDs, raft index and
 * term) stay decimal strings: a JSON number above 2^53 silently loses its last digits, and a
 * member ID off by one names another member, or none.
 */

import type { Answer, RawAlarms, RawMemberList, RawStatus, RawUint64, RawVersion } from '../../ports/etcd.js';
import type { EtcdEndpointStatus, EtcdMember, EtcdState } from '../../snapshot/model.js';

export function uint64String(v: RawUint64, what: string): string {
  if (typeof v === 'bigint') {
    if (v < 0n || v > 0xffffffffffffffffn) throw new Error(`${what}: ${v} is not a uint64`);
    return v.toString(10);
  }
  if (typeof v === 'number') {
    // A number above 2^53 has already lost precision: refuse rather than record a wrong ID.
    if (!Number.isSafeInteger(v) || v < 0)
      throw new Error(`${what}: ${v} is not exact; pass uint64 values as strings`);
    return String(v);
  }
  const s = v.trim();
  if (!/^\d+$/.test(s) || BigInt(s) > 0xffffffffffffffffn) throw new Error(`${what}: "${v}" is not a uint64`);
  return BigInt(s).toString(10); // drops leading zeros
}

const ALARM_NAMES: Record<string, string> = {
  '0': 'NONE',
  '1': 'NOSPACE',
  '2': 'CORRUPT',
  none: 'NONE',
  nospace: 'NOSPACE',
  corrupt: 'CORRUPT',
};

export function alarmName(a: string | number): string {
  return ALARM_NAMES[String(a).toLowerCase()] ?? String(a).toUpperCase();
}

export function mapMembers(list: RawMemberList): EtcdMember[] {
  return list.members.map((m, i) => ({
    id: uint64String(m.ID, `members[${i}].ID`),
    // An added but never started member has no name yet: keep it, the audit flags it.
    name: m.name ?? '',
    peerURLs: [...(m.peerURLs ?? [])],
    clientURLs: [...(m.clientURLs ?? [])],
    isLearner: m.isLearner === true,
  }));
}

export function mapStatus(endpoint: string, answer: Answer<RawStatus>): EtcdEndpointStatus {
  if (!answer.ok) return { endpoint, errors: [answer.error] };
  const s = answer.value;
  const out: EtcdEndpointStatus = { endpoint, errors: [...(s.errors ?? [])] };
  if (s.header?.member_id !== undefined)
    out.memberId = uint64String(s.header.member_id, `${endpoint} header.member_id`);
  if (s.leader !== undefined) out.leaderId = uint64String(s.leader, `${endpoint} leader`);
  if (s.version) out.version = s.version;
  if (s.dbSize !== undefined) out.dbSize = Number(uint64String(s.dbSize, `${endpoint} dbSize`));
  if (s.dbSizeInUse !== undefined)
    out.dbSizeInUse = Number(uint64String(s.dbSizeInUse, `${endpoint} dbSizeInUse`));
  if (s.raftTerm !== undefined) out.raftTerm = uint64String(s.raftTerm, `${endpoint} raftTerm`);
  if (s.raftIndex !== undefined) out.raftIndex = uint64String(s.raftIndex, `${endpoint} raftIndex`);
  if (s.isLearner !== undefined) out.isLearner = s.isLearner;
  return out;
}

export function mapAlarms(raw: RawAlarms): EtcdState['alarms'] {
  return raw.alarms
    .map((a, i) => ({
      memberId: uint64String(a.memberID, `alarms[${i}].memberID`),
      alarm: alarmName(a.alarm),
    }))
    .filter((a) => a.alarm !== 'NONE');
}

export interface EtcdAnswers {
  /** The endpoint that answered the member list. */
  memberListEndpoint: string;
  memberList: RawMemberList;
  statuses: { endpoint: string; answer: Answer<RawStatus> }[];
  version?: RawVersion;
  alarms?: RawAlarms;
}

export function mapEtcdState(a: EtcdAnswers): EtcdState {
  return {
    source: { kind: 'etcd', endpoint: a.memberListEndpoint },
    members: mapMembers(a.memberList),
    endpoints: a.statuses.map((s) => mapStatus(s.endpoint, s.answer)),
    ...(a.version && { version: { server: a.version.etcdserver, cluster: a.version.etcdcluster } }),
    alarms: a.alarms ? mapAlarms(a.alarms) : [],
  };
}
