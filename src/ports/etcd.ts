/**
 * The port through which the core reads etcd, and the raw answers the adapter maps from. The raw
 * shapes are the subset of etcd's gRPC messages (as the `etcd3` npm client returns them: uint64
 * as decimal strings) that ferry uses; map.ts turns them into model.EtcdState.
 */
import type { EtcdState } from '../snapshot/model.js';

/** A uint64 as etcd clients hand it over; only strings and bigints are exact above 2^53. */
export type RawUint64 = string | bigint | number;

export interface RawMember {
  ID: RawUint64;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner?: boolean;
}

export interface RawMemberList {
  header?: { member_id?: RawUint64; cluster_id?: RawUint64 };
  members: RawMember[];
}

export interface RawStatus {
  header?: { member_id?: RawUint64 };
  version?: string;
  dbSize?: RawUint64;
  dbSizeInUse?: RawUint64;
  leader?: RawUint64;
  raftIndex?: RawUint64;
  raftTerm?: RawUint64;
  isLearner?: boolean;
  errors?: string[];
}

/** GET https://MEMBER:2379/version */
export interface RawVersion {
  etcdserver: string;
  etcdcluster: string;
}

export interface RawAlarm {
  memberID: RawUint64;
  /** etcd3 gives enum names ("Nospace", "Corrupt", "None"), etcdctl numbers or "NOSPACE". */
  alarm: string | number;
}

export interface RawAlarms {
  alarms: RawAlarm[];
}

/** The outcome of one call against one endpoint. */
export type Answer<T> = { ok: true; value: T } | { ok: false; error: string };

export interface EtcdReader {
  /** Client URLs as given, normalized to https://host:port. */
  readonly endpoints: readonly string[];
  /** Member list (linearizable) from the first endpoint that answers. */
  memberList(): Promise<{ endpoint: string; list: RawMemberList }>;
  /** Maintenance Status of one endpoint, through a client bound to that endpoint only. */
  status(endpoint: string): Promise<RawStatus>;
  /** GET /version over HTTPS with the client certificate. */
  version(endpoint: string): Promise<RawVersion>;
  /** Active alarms, from the first endpoint that answers. */
  alarms(): Promise<RawAlarms>;
  /**
   * All of the above, mapped into the snapshot model. Fails only when no endpoint answers the
   * member list; other failures become endpoint errors or warnings.
   */
  readState(): Promise<{ state: EtcdState; warnings: string[] }>;
  close(): void;
}
