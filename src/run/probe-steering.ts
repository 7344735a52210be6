/**
 * Where the etcd write probe writes: the started, healthy voters other than `exceptId` (a member
 * about to go), `firstId` (by default the leader) first. The probe stays on the leader through a
 * leadership move: raft drops proposals that reach the leader while it hands over, and a follower
 * that forwarded one is never told, so its write hangs to its deadline; the leader's own writes are
 * refused at once and retried.
 */
import type { EtcdView } from '../ports/run.js';

export function probeEndpoints(view: EtcdView, exceptId?: string, firstId = view.leaderId): string[] {
  const members = view.members.filter(
    (m) => !m.isLearner && m.name !== '' && m.id !== exceptId && view.healthy.includes(m.id),
  );
  const ordered = [...members.filter((m) => m.id === firstId), ...members.filter((m) => m.id !== firstId)];
  return ordered.flatMap((m) => m.clientURLs.slice(0, 1));
}
