/**
 * etcd membership and leadership changes over the `etcd3` npm client, mTLS as kubeadm's stacked
 * etcd requires. The rules (test-infra.md pitfalls 1–8, etcd.md §2–3):
 * - etcd3's fault handling is off (`faultHandling: { host: () => noop, global: noop }`); ferry retries
 *   `unhealthy cluster` and "learner not in sync" itself, with backoff.
 * - One client per endpoint, and all of them are dropped after every membership change: etcd3's host
 *   list is fixed, and a removed member must not be asked again.
 * - MemberRemove goes to another member than the one removed; MoveLeader goes to the current
 *   leader, found by Maintenance Status on each member.
 * - Member ids are kept as the decimal strings etcd3 returns (uint64 does not fit a JS number).
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { noop } from 'cockatiel';
import { Etcd3, type IMember, type IStatusResponse } from 'etcd3';
import { FerryError, inputError } from '../../errors.js';
import type { EtcdAdminPort, EtcdEndpointStatus, EtcdMemberInfo, EtcdView } from '../../ports/run.js';
import {
  errorText,
  LEARNER_NOT_IN_SYNC,
  NOT_LEADER,
  TRANSIENT,
  UNHEALTHY_CLUSTER,
  withBackoff,
} from './admin-retry.js';
import { normalizeEndpoint } from './reader.js';
import { type EtcdTlsBytes, type EtcdTlsFiles, readEtcdTlsFiles } from './tls-files.js';

export type EtcdTls = EtcdTlsBytes;

export interface EtcdAdminOptions {
  /** Client URLs to start from; the member list replaces them after the first look. */
  endpoints: string[];
  tls: EtcdTls | EtcdTlsFiles;
  /** Deadline of one call. Default 3 s. */
  callTimeoutMs?: number;
  /** How long a membership change may be retried (`unhealthy cluster`, not in sync). Default 90 s. */
  membershipTimeoutMs?: number;
  log?: (line: string) => void;
}

export type RemoveOutcome = 'removed' | 'already-absent';

/** The client certificate material, read from files when given as paths (a bad path is an input error). */
export function readTls(tls: EtcdAdminOptions['tls']): EtcdTls {
  return 'ca' in tls ? tls : readEtcdTlsFiles(tls);
}

function toMember(m: IMember): EtcdMemberInfo {
  return {
    id: String(m.ID),
    name: m.name ?? '',
    peerURLs: [...(m.peerURLs ?? [])],
    clientURLs: [...(m.clientURLs ?? [])],
    isLearner: Boolean(m.isLearner),
  };
}

export class EtcdAdmin implements EtcdAdminPort {
  readonly #tls: EtcdTls;
  readonly #callTimeoutMs: number;
  readonly #membershipTimeoutMs: number;
  readonly #log: (line: string) => void;
  readonly #clients = new Map<string, Etcd3>();
  #endpoints: string[];
  /** Bumped on every membership change: callers can tell that clients were rebuilt. */
  generation = 0;

  constructor(opts: EtcdAdminOptions) {
    if (opts.endpoints.length === 0) {
      throw inputError(
        'no etcd endpoints given',
        { field: '--etcd-endpoints' },
        'pass --etcd-endpoints https://HOST:2379,...',
      );
    }
    this.#tls = readTls(opts.tls);
    this.#endpoints = opts.endpoints.map(normalizeEndpoint);
    this.#callTimeoutMs = opts.callTimeoutMs ?? 3_000;
    this.#membershipTimeoutMs = opts.membershipTimeoutMs ?? 90_000;
    this.#log = opts.log ?? (() => {});
  }

  endpoints(): string[] {
    return [...this.#endpoints];
  }

  useEndpoints(urls: string[]): void {
    const known = urls.map(normalizeEndpoint);
    this.#endpoints = [...new Set([...known, ...this.#endpoints])];
  }

  #client(endpoint: string): Etcd3 {
    let c = this.#clients.get(endpoint);
    if (!c) {
      c = new Etcd3({
        hosts: [endpoint],
        credentials: { rootCertificate: this.#tls.ca, certChain: this.#tls.cert, privateKey: this.#tls.key },
        dialTimeout: this.#callTimeoutMs,
        faultHandling: { host: () => noop, global: noop },
        defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + this.#callTimeoutMs }),
      });
      this.#clients.set(endpoint, c);
    }
    return c;
  }

  /** Drops every client and takes the endpoints from `members` (after a membership change). */
  #rebuild(members: EtcdMemberInfo[]): void {
    for (const c of this.#clients.values()) c.close();
    this.#clients.clear();
    const urls = members.flatMap((m) => m.clientURLs.slice(0, 1)).map(normalizeEndpoint);
    if (urls.length > 0) this.#endpoints = urls;
    this.generation++;
  }

  /** A linearizable member list from the first endpoint that answers (learners refuse it). */
  async memberList(exclude?: string): Promise<{ endpoint: string; members: EtcdMemberInfo[] }> {
    const failures: string[] = [];
    const errors: unknown[] = [];
    for (const ep of this.#endpoints) {
      if (ep === exclude) continue;
      try {
        const r = await this.#client(ep).cluster.memberList({ linearizable: true });
        return { endpoint: ep, members: r.members.map(toMember) };
      } catch (err) {
        failures.push(`${ep}: ${errorText(err)}`);
        errors.push(err);
      }
    }
    throw new FerryError('unreachable', `no etcd member answered the member list: ${failures.join('; ')}`, {
      remediation:
        'check the etcd endpoints and client certificate (--etcd-endpoints, --etcd-cacert/--etcd-cert/--etcd-key) and that a majority of members runs',
      // Each endpoint's own error, so a caller can tell a certificate problem from an outage.
      cause: errors.length === 1 ? errors[0] : new AggregateError(errors, 'every etcd endpoint failed'),
    });
  }

  async status(endpoint: string, memberId: string): Promise<EtcdEndpointStatus> {
    try {
      const s: IStatusResponse = await this.#client(endpoint).maintenance.status();
      return {
        ok: true,
        memberId: String(s.header.member_id),
        endpoint,
        leaderId: String(s.leader),
        raftTerm: String(s.raftTerm),
        raftIndex: String(s.raftIndex),
        raftAppliedIndex: String(s.raftAppliedIndex ?? s.raftIndex),
        isLearner: Boolean(s.isLearner),
        version: s.version,
        errors: [...(s.errors ?? [])],
      };
    } catch (err) {
      return { ok: false, memberId, endpoint, error: errorText(err) };
    }
  }

  /** `endpoint health` as etcdctl does it: a linearizable read through that member. */
  async #health(endpoint: string): Promise<boolean> {
    try {
      await this.#client(endpoint).get('health').exec();
      return true;
    } catch {
      return false;
    }
  }

  async observe(): Promise<EtcdView> {
    const { members } = await this.memberList();
    const known = new Set(members.flatMap((m) => m.clientURLs.slice(0, 1)).map(normalizeEndpoint));
    // A member that was added to the list since the last look gets a client; a removed one none.
    if (known.size > 0 && [...known].sort().join() !== [...this.#endpoints].sort().join())
      this.#rebuild(members);
    const statuses = await Promise.all(
      members
        .filter((m) => m.clientURLs[0])
        .map((m) => this.status(normalizeEndpoint(m.clientURLs[0]!), m.id)),
    );
    const healthy = await Promise.all(
      statuses.map(async (s) => {
        if (!s.ok || s.errors.length > 0) return undefined;
        if (s.isLearner) return s.memberId; // learners refuse reads; answering status is their health
        return (await this.#health(s.endpoint)) ? s.memberId : undefined;
      }),
    );
    return {
      members,
      statuses,
      leaderId: leaderOf(statuses),
      healthy: healthy.filter((h): h is string => h !== undefined),
    };
  }

  async leaderId(): Promise<string | undefined> {
    const { members } = await this.memberList();
    const statuses = await Promise.all(
      members
        .filter((m) => m.clientURLs[0])
        .map((m) => this.status(normalizeEndpoint(m.clientURLs[0]!), m.id)),
    );
    return leaderOf(statuses);
  }

  /** MoveLeader, sent to the current leader; resolves once `targetId` leads. */
  async moveLeader(targetId: string, signal?: AbortSignal): Promise<void> {
    await withBackoff(
      async () => {
        const { members } = await this.memberList();
        const target = members.find((m) => m.id === targetId);
        if (!target)
          throw new FerryError(
            'gate',
            `cannot move etcd leadership to member ${targetId}: it is not in the member list`,
          );
        if (target.isLearner)
          throw new FerryError('gate', `cannot move etcd leadership to member ${targetId}: it is a learner`);
        const statuses = await Promise.all(
          members
            .filter((m) => m.clientURLs[0])
            .map((m) => this.status(normalizeEndpoint(m.clientURLs[0]!), m.id)),
        );
        const leader = leaderOf(statuses);
        if (leader === targetId) return;
        if (!leader) throw new Error('no leader');
        const leaderUrl = members.find((m) => m.id === leader)?.clientURLs[0];
        if (!leaderUrl) throw new Error(`no leader (leader ${leader} has no client URL)`);
        this.#log(`etcd: MoveLeader ${leader} → ${targetId} (sent to ${leaderUrl})`);
        await this.#client(normalizeEndpoint(leaderUrl)).maintenance.moveLeader({ targetID: targetId });
        // MoveLeader returns when the transfer finished; confirm from the target itself.
        const seen = await this.status(normalizeEndpoint(target.clientURLs[0] ?? leaderUrl), targetId);
        if (!seen.ok || seen.leaderId !== targetId) throw new Error('leader changed elsewhere');
      },
      {
        retryIf: (err) =>
          !(err instanceof FerryError) && (NOT_LEADER.test(errorText(err)) || TRANSIENT.test(errorText(err))),
        timeoutMs: 30_000,
        initialDelayMs: 100,
        maxDelayMs: 1_000,
        ...(signal && { signal }),
        onRetry: (err, n, d) =>
          this.#log(`etcd: move leader attempt ${n} failed (${errorText(err)}); retry in ${d} ms`),
      },
    ).catch((err: unknown) => {
      if (err instanceof FerryError) throw err;
      throw new FerryError('internal', `etcd MoveLeader to ${targetId} failed: ${errorText(err)}`, {
        cause: err,
        remediation:
          'check every member is healthy (etcdctl endpoint health --cluster) and that the target is a caught-up voter',
      });
    });
  }

  /**
   * MemberRemove through another voter, retrying `unhealthy cluster` (5 s after every change) with
   * backoff; then a fresh list, from another member, must not hold it.
   */
  async removeMember(id: string, signal?: AbortSignal): Promise<RemoveOutcome> {
    const first = await this.memberList();
    const victim = first.members.find((m) => m.id === id);
    if (!victim) return 'already-absent';
    const victimUrl = victim.clientURLs[0] ? normalizeEndpoint(victim.clientURLs[0]) : undefined;
    const via = first.members
      .filter((m) => m.id !== id && !m.isLearner && m.clientURLs[0])
      .map((m) => normalizeEndpoint(m.clientURLs[0]!));
    if (via.length === 0) {
      throw new FerryError(
        'gate',
        `cannot remove etcd member ${id}: no other voting member to send the request to`,
        {
          remediation: 'a cluster must keep at least one voter; add and promote a member first',
        },
      );
    }
    await withBackoff(
      async (attempt) => {
        const ep = via[(attempt - 1) % via.length]!;
        this.#log(`etcd: MemberRemove ${id} (${victim.name || 'unstarted'}) via ${ep}, attempt ${attempt}`);
        try {
          await this.#client(ep).cluster.memberRemove({ ID: id });
        } catch (err) {
          // A retried removal whose earlier attempt was applied although its answer was lost.
          if (attempt > 1 && /member not found/i.test(errorText(err))) return;
          throw err;
        }
      },
      {
        retryIf: (err) => UNHEALTHY_CLUSTER.test(errorText(err)) || TRANSIENT.test(errorText(err)),
        timeoutMs: this.#membershipTimeoutMs,
        initialDelayMs: 500,
        maxDelayMs: 3_000,
        ...(signal && { signal }),
        onRetry: (err, n, d) =>
          this.#log(`etcd: member remove attempt ${n}: ${errorText(err)}; retry in ${d} ms`),
      },
    ).catch((err: unknown) => {
      throw new FerryError('internal', `etcd MemberRemove ${id} failed: ${errorText(err)}`, {
        cause: err,
        remediation:
          '`unhealthy cluster` means a voter was not connected to all others for 5 s: check `etcdctl endpoint health --cluster`, then resume',
      });
    });
    // Confirm with a fresh list from a member that stays (never trust the answer alone).
    const after = await withBackoff(
      async () => {
        const l = await this.memberList(victimUrl);
        if (l.members.some((m) => m.id === id)) throw new Error(`member ${id} still listed`);
        return l.members;
      },
      { retryIf: () => true, timeoutMs: 10_000, initialDelayMs: 200, maxDelayMs: 1_000 },
    );
    this.#rebuild(after);
    return 'removed';
  }

  /** MemberAdd as a learner (what Talos does from its own side), retrying `unhealthy cluster`. */
  async addLearner(
    peerURL: string,
    signal?: AbortSignal,
  ): Promise<{ member: EtcdMemberInfo; members: EtcdMemberInfo[] }> {
    const res = await withBackoff(
      async (attempt) => {
        const ep = this.#endpoints[(attempt - 1) % this.#endpoints.length]!;
        try {
          const r = await this.#client(ep).cluster.memberAdd({ peerURLs: [peerURL], isLearner: true });
          return { member: toMember(r.member), members: r.members.map(toMember) };
        } catch (err) {
          if (attempt > 1 && /peerURL exists/i.test(errorText(err))) {
            const { members } = await this.memberList();
            const m = members.find((x) => x.peerURLs.includes(peerURL));
            if (m) return { member: m, members };
          }
          throw err;
        }
      },
      {
        retryIf: (err) => UNHEALTHY_CLUSTER.test(errorText(err)) || TRANSIENT.test(errorText(err)),
        timeoutMs: this.#membershipTimeoutMs,
        initialDelayMs: 500,
        maxDelayMs: 3_000,
        ...(signal && { signal }),
      },
    );
    this.#rebuild(res.members);
    return res;
  }

  /** MemberPromote, retried until the learner is in sync with the leader. */
  async promote(id: string, signal?: AbortSignal): Promise<void> {
    await withBackoff(
      async (attempt) => {
        const { members } = await this.memberList();
        const m = members.find((x) => x.id === id);
        if (!m) throw new FerryError('gate', `cannot promote etcd member ${id}: not in the member list`);
        if (!m.isLearner) return;
        const via = members
          .filter((x) => !x.isLearner && x.clientURLs[0])
          .map((x) => normalizeEndpoint(x.clientURLs[0]!));
        await this.#client(via[(attempt - 1) % via.length]!).cluster.memberPromote({ ID: id });
      },
      {
        retryIf: (err) =>
          !(err instanceof FerryError) &&
          (LEARNER_NOT_IN_SYNC.test(errorText(err)) ||
            UNHEALTHY_CLUSTER.test(errorText(err)) ||
            TRANSIENT.test(errorText(err))),
        timeoutMs: this.#membershipTimeoutMs,
        initialDelayMs: 300,
        maxDelayMs: 2_000,
        ...(signal && { signal }),
      },
    );
    this.#rebuild((await this.memberList()).members);
  }

  /**
   * Maintenance Snapshot of one voter into `file` (mode 0600: it holds every Secret), written to a
   * temporary name and renamed when complete, so a half-written file never looks like a snapshot.
   */
  async snapshot(file: string, signal?: AbortSignal): Promise<{ bytes: number; endpoint: string }> {
    const { members } = await this.memberList();
    const voters = members
      .filter((m) => !m.isLearner && m.clientURLs[0])
      .map((m) => normalizeEndpoint(m.clientURLs[0]!));
    const failures: string[] = [];
    for (const ep of voters) {
      signal?.throwIfAborted();
      const tmp = `${file}.${process.pid}.part`;
      try {
        await mkdir(dirname(file), { recursive: true });
        const out = createWriteStream(tmp, { mode: 0o600 });
        const stream = await this.#client(ep).maintenance.snapshot();
        let bytes = 0;
        await new Promise<void>((resolve, reject) => {
          stream.on('data', (r) => {
            bytes += r.blob.length;
            out.write(r.blob);
          });
          stream.on('error', reject);
          stream.on('end', () => out.end(() => resolve()));
          out.on('error', reject);
        });
        if (bytes === 0) throw new Error('empty snapshot');
        await rename(tmp, file);
        return { bytes, endpoint: ep };
      } catch (err) {
        failures.push(`${ep}: ${errorText(err)}`);
        await rm(tmp, { force: true });
      }
    }
    throw new FerryError('internal', `no etcd member gave a snapshot: ${failures.join('; ')}`, {
      remediation: 'take one by hand: etcdctl snapshot save FILE (with the etcd client certificate)',
    });
  }

  close(): void {
    for (const c of this.#clients.values()) c.close();
    this.#clients.clear();
  }
}

/** The member that reports itself as leader; with two claims the higher term wins. */
export function leaderOf(statuses: EtcdEndpointStatus[]): string | undefined {
  const self = statuses.filter(
    (s): s is Extract<EtcdEndpointStatus, { ok: true }> =>
      s.ok && s.leaderId !== '0' && s.leaderId === s.memberId,
  );
  self.sort((a, b) =>
    BigInt(b.raftTerm) > BigInt(a.raftTerm) ? 1 : BigInt(b.raftTerm) < BigInt(a.raftTerm) ? -1 : 0,
  );
  return self[0]?.memberId;
}
