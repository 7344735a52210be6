/** etcd as `etcdctl -w json` prints it: member IDs are bare JSON numbers above 2^53, as etcdctl writes them. */
import { CLUSTER, CONTROL_PLANES } from './cluster.js';
import { etcdIdFor } from './seed.js';

const ETCD_CLUSTER_ID = etcdIdFor('cluster');
export const ETCD_LEADER = 'cp-2';
const ETCD_RAFT_TERM = 7;

function etcdHeader(memberName: string, revision: number): string {
  return `{"cluster_id":${ETCD_CLUSTER_ID},"member_id":${etcdIdFor(memberName)},"revision":${revision},"raft_term":${ETCD_RAFT_TERM}}`;
}

export function etcdMemberList(): string {
  const members = CONTROL_PLANES.map(
    (c) =>
      `{"ID":${etcdIdFor(c.name)},"name":"${c.name}","peerURLs":["https://${c.ip}:2380"],"clientURLs":["https://${c.ip}:2379"]}`,
  );
  return `{"header":${etcdHeader('cp-1', 0).replace(',"revision":0', '')},"members":[${members.join(',')}]}\n`;
}

export function etcdEndpointStatus(): string {
  const rows = CONTROL_PLANES.map((c, i) => {
    const revision = 9_184_233;
    const raftIndex = 11_402_917 + i;
    return (
      `{"Endpoint":"https://${c.ip}:2379","Status":{"header":${etcdHeader(c.name, revision)},` +
      `"version":"${CLUSTER.etcdVersion}","dbSize":${88_281_088 + i * 4096},"leader":${etcdIdFor(ETCD_LEADER)},` +
      `"raftIndex":${raftIndex},"raftTerm":${ETCD_RAFT_TERM},"raftAppliedIndex":${raftIndex},"dbSizeInUse":${41_762_816 + i * 8192}}}`
    );
  });
  return `[${rows.join(',')}]\n`;
}

export function etcdVersion(): string {
  return `${JSON.stringify({ etcdserver: CLUSTER.etcdVersion, etcdcluster: '3.5.0' })}\n`;
}

export function etcdAlarms(): string {
  // No alarms: etcdctl omits the empty list and prints only the header.
  return `{"header":${etcdHeader('cp-1', 9_184_233)}}\n`;
}
