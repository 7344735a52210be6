import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Etcd3, IMember, IStatusResponse } from 'etcd3';
import { FerryError } from '../../errors.js';
import type { KeySpec } from '../../pki/forge.js';
import { writeEtcdMemberCerts, writeKubeadmPki } from '../../pki/kubeadm-layout.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { type EtcdBinaries, type EtcdMinor, locateEtcd } from './binaries.js';
import {
  type ClientCredentials,
  type ClientTlsFiles,
  type EtcdVersion,
  etcdClient,
  fetchVersion,
  readCredentials,
  withEtcdClient,
} from './client.js';
import { clientUrl, type MemberTlsFiles, memberArgs, memberIp, peerUrl } from './flags.js';
import { defaultLabRoot, labDataStorage, reapStaleLabs, trackLab, untrackLab } from './lifecycle.js';
import { childEnv, procStartTicks, spawnTracked, type TrackedProcess } from './process.js';
import { errorText, LEARNER_NOT_IN_SYNC, retrying, TRANSIENT, UNHEALTHY_CLUSTER } from './retry.js';

export { disposeAllLabs, reapStaleLabs } from './lifecycle.js';

/**
 * A real etcd cluster on loopback for the lab and the tests: N TLS members laid out like kubeadm's
 * stacked etcd, each on its own 127.0.<subnet>.<n> address with the real ports, driven through the
 * etcd API the way ferry and Talos drive a production cluster (learner add, promote, move leader,
 * remove). Member IDs are decimal strings (uint64 does not fit a JS number).
 */

export type MemberState = 'unstarted' | 'running' | 'stopped' | 'crashed' | 'exited' | 'removed';

export type LabMember = {
  name: string;
  ip: string;
  clientUrl: string;
  peerUrl: string;
  /** Decimal uint64; undefined only before the first start of an initial member. */
  id: string | undefined;
  version: EtcdMinor;
  isLearner: boolean;
  state: MemberState;
  pid: number | undefined;
  /** The member's directory: pki/, etcd.log, etcd.pid, and data/ unless the data lives elsewhere. */
  dir: string;
  /** Its --data-dir. */
  dataDir: string;
};

export type MemberStatus =
  | {
      name: string;
      ok: true;
      id: string;
      leaderId: string;
      isLearner: boolean;
      raftIndex: string;
      raftTerm: string;
      raftAppliedIndex: string;
      /** Server version of the member (Maintenance.Status `version`). */
      version: string;
      errors: string[];
    }
  | { name: string; ok: false; error: string };

export type EtcdLabOptions = {
  /** Third octet of the members' addresses: use a different one per concurrently running cluster. */
  subnet: number;
  /** Initial members: a count (all of `version`) or one entry per member. Default 3. */
  members?: number | { name?: string; version?: EtcdMinor }[];
  /** Default version of members that do not say. Default '3.4'. */
  version?: EtcdMinor;
  /** Parent of the cluster's directory. Default `$TMPDIR/ferry-lab-etcd`. */
  root?: string;
  /**
   * Parent of the members' data directories, or null to keep them in the cluster's directory.
   * Default: labDataStorage() (a tmpfs when there is one).
   */
  dataRoot?: string | null;
  /** Keep the directory (data, PKI, logs) after dispose, for debugging. */
  keepDir?: boolean;
  /** How long a member may take to answer after it is started. Default 30 s. */
  startTimeoutMs?: number;
  /**
   * Key algorithm of the lab's PKI (kubeadm's `encryptionAlgorithm`). Default ECDSA P-256, which
   * kubeadm supports: an RSA 2048 key costs seconds of CPU on a shared core, and a lab makes dozens.
   */
  key?: KeySpec;
};

type MemberRec = {
  name: string;
  index: number;
  ip: string;
  minor: EtcdMinor;
  id: string | undefined;
  isLearner: boolean;
  state: MemberState;
  dir: string;
  dataDir: string;
  tls: MemberTlsFiles;
  initialState: 'new' | 'existing';
  initialCluster: { name: string; peerUrl: string }[];
  proc: TrackedProcess | undefined;
};

const MEMBERSHIP_TIMEOUT_MS = 45_000;

/** Starts a cluster, runs `fn`, and disposes the cluster whatever happens. */
export async function withEtcdLab<T>(
  opts: EtcdLabOptions,
  fn: (lab: EtcdLabCluster) => Promise<T>,
): Promise<T> {
  const lab = await EtcdLabCluster.start(opts);
  try {
    return await fn(lab);
  } finally {
    await lab.dispose();
  }
}

function isRetryableMembershipError(err: unknown): boolean {
  const t = errorText(err);
  return UNHEALTHY_CLUSTER.test(t) || TRANSIENT.test(t);
}

export class EtcdLabCluster {
  readonly subnet: number;
  readonly dir: string;
  /** Where the members' data directories are, when not in `dir` (see labDataStorage). */
  readonly dataDir: string | undefined;
  readonly pkiDir: string;
  readonly keepDir: boolean;
  readonly #token: string;
  readonly #startTimeoutMs: number;
  readonly #defaultVersion: EtcdMinor;
  readonly #key: KeySpec;
  readonly #members: MemberRec[] = [];
  readonly #spawned: number[] = [];
  #creds: ClientCredentials | undefined;
  #nextIndex = 1;
  #disposed = false;

  private constructor(opts: EtcdLabOptions, dir: string, dataDir: string | undefined) {
    this.subnet = opts.subnet;
    this.dir = dir;
    this.dataDir = dataDir;
    this.pkiDir = join(dir, 'pki');
    this.keepDir = opts.keepDir ?? false;
    this.#token = `ferry-lab-${opts.subnet}-${dir.slice(-6)}`;
    this.#startTimeoutMs = opts.startTimeoutMs ?? 30_000;
    this.#defaultVersion = opts.version ?? '3.4';
    this.#key = opts.key ?? { algorithm: 'ECDSA', curve: 'P-256' };
  }

  get dirs(): string[] {
    return this.dataDir ? [this.dir, this.dataDir] : [this.dir];
  }

  /** Bootstraps a new cluster and waits until every member answers and a leader is elected. */
  static async start(opts: EtcdLabOptions): Promise<EtcdLabCluster> {
    const specs =
      typeof opts.members === 'number' || opts.members === undefined
        ? Array.from({ length: opts.members ?? 3 }, () => ({}) as { name?: string; version?: EtcdMinor })
        : opts.members;
    if (specs.length === 0) throw new RangeError('a lab cluster needs at least one member');
    const root = opts.root ?? defaultLabRoot();
    await mkdir(root, { recursive: true });
    // Orphans of a killed run would hold the ports of the addresses we are about to use.
    const dataRoot = opts.dataRoot === undefined ? labDataStorage().root : (opts.dataRoot ?? undefined);
    await reapStaleLabs(root, dataRoot);
    const owner = JSON.stringify({ ownerPid: process.pid, ownerStartTicks: procStartTicks(process.pid) });
    const dir = await mkdtemp(join(root, `s${opts.subnet}-`));
    await writeFileAtomic(join(dir, 'owner.json'), owner);
    let dataDir: string | undefined;
    if (dataRoot) {
      await mkdir(dataRoot, { recursive: true, mode: 0o700 });
      dataDir = await mkdtemp(join(dataRoot, `s${opts.subnet}-`));
      await writeFileAtomic(join(dataDir, 'owner.json'), owner);
    }
    const lab = new EtcdLabCluster(opts, dir, dataDir);
    trackLab(lab);
    try {
      await lab.#bootstrap(specs);
    } catch (err) {
      await lab.dispose();
      throw err;
    }
    return lab;
  }

  async #bootstrap(specs: { name?: string; version?: EtcdMinor }[]): Promise<void> {
    const recs = specs.map((s) => this.#newRecord(s.name, s.version ?? this.#defaultVersion, 'new'));
    const first = recs[0]!;
    await writeKubeadmPki(this.pkiDir, {
      apiserver: {
        nodeName: first.name,
        advertiseAddress: first.ip,
        dnsNames: [first.name, 'localhost'],
        ipAddresses: [first.ip, '127.0.0.1'],
      },
      etcdMembers: recs.map((r) => ({ name: r.name, ip: r.ip })),
      key: this.#key,
      serviceAccountKey: this.#key,
    });
    this.#creds = await readCredentials(this.clientTls());
    const initialCluster = recs.map((r) => ({ name: r.name, peerUrl: peerUrl(r.ip) }));
    for (const r of recs) {
      r.initialCluster = initialCluster;
      await this.#issueMemberCerts(r);
    }
    const bins = await Promise.all(recs.map((r) => locateEtcd(r.minor)));
    await Promise.all(recs.map((r, i) => this.#spawn(r, bins[i]!)));
    const statuses = await Promise.all(recs.map((r) => this.#waitAnswering(r)));
    statuses.forEach((st, i) => {
      recs[i]!.id = st.header.member_id;
    });
    await this.waitForLeader();
  }

  #newRecord(name: string | undefined, minor: EtcdMinor, initialState: 'new' | 'existing'): MemberRec {
    const index = this.#nextIndex++;
    const ip = memberIp(this.subnet, index);
    const memberName = name ?? `m${index}`;
    if (this.#members.some((m) => m.name === memberName)) {
      throw new FerryError('usage', `lab etcd member ${memberName} already exists`, {
        remediation: 'choose another member name (a removed member cannot come back under its old identity)',
      });
    }
    const dir = join(this.dir, memberName);
    const rec: MemberRec = {
      dataDir: this.dataDir ? join(this.dataDir, memberName) : join(dir, 'data'),
      name: memberName,
      index,
      ip,
      minor,
      id: undefined,
      isLearner: false,
      state: 'unstarted',
      dir,
      tls: { caFile: '', certFile: '', keyFile: '', peerCertFile: '', peerKeyFile: '' },
      initialState,
      initialCluster: [],
      proc: undefined,
    };
    this.#members.push(rec);
    return rec;
  }

  async #issueMemberCerts(r: MemberRec): Promise<void> {
    await mkdir(r.dataDir, { recursive: true, mode: 0o700 });
    const files = await writeEtcdMemberCerts(this.pkiDir, { name: r.name, ip: r.ip }, join(r.dir, 'pki'), {
      key: this.#key,
    });
    r.tls = { caFile: join(this.pkiDir, 'etcd', 'ca.crt'), ...files };
  }

  async #spawn(r: MemberRec, bins: EtcdBinaries): Promise<void> {
    this.#assertUsable();
    const args = memberArgs({
      name: r.name,
      ip: r.ip,
      dataDir: r.dataDir,
      tls: r.tls,
      initialCluster: r.initialCluster,
      state: r.initialState,
      token: this.#token,
    });
    r.proc = await spawnTracked({
      command: bins.etcd,
      args,
      env: childEnv(),
      pidFile: join(r.dir, 'etcd.pid'),
      logFile: join(r.dir, 'etcd.log'),
    });
    this.#spawned.push(r.proc.pid);
    r.state = 'running';
    const proc = r.proc;
    void proc.exited.then(() => {
      // An exit we did not ask for (removed from the cluster, refused to join, panicked).
      if (r.proc === proc && r.state === 'running') r.state = 'exited';
    });
  }

  /** Polls Maintenance.Status on the member until it answers; fails fast if the process dies. */
  async #waitAnswering(r: MemberRec): Promise<IStatusResponse> {
    const proc = r.proc;
    if (!proc) throw new Error(`lab etcd member ${r.name} was never spawned`);
    const died = (): FerryError =>
      new FerryError(
        'internal',
        `lab etcd member ${r.name} (${r.ip}) exited during start: ${JSON.stringify(proc.exit)}`,
        {
          remediation: `see ${join(r.dir, 'etcd.log')}; last lines:\n${proc.logTail(2000)}`,
        },
      );
    // A member that exits (bad flag, port taken, refused to join) fails the wait at once.
    const attempt = async (): Promise<IStatusResponse> => {
      const res = await Promise.race([this.#statusOf(r), proc.exited.then(() => undefined)]);
      if (res === undefined) throw died();
      return res;
    };
    return retrying(`waiting for lab etcd member ${r.name} to answer`, attempt, {
      retryIf: (err) => !(err instanceof FerryError),
      timeoutMs: this.#startTimeoutMs,
      initialDelayMs: 100,
      maxDelayMs: 500,
    });
  }

  async #statusOf(r: MemberRec): Promise<IStatusResponse> {
    return withEtcdClient([clientUrl(r.ip)], this.#credentials(), (c) => c.maintenance.status());
  }

  #credentials(): ClientCredentials {
    if (!this.#creds) throw new Error('lab cluster has no credentials yet');
    return this.#creds;
  }

  #assertUsable(): void {
    if (this.#disposed) throw new FerryError('usage', 'the lab etcd cluster has been disposed');
  }

  #member(name: string): MemberRec {
    const r = this.#members.find((m) => m.name === name);
    if (!r) {
      throw new FerryError('usage', `no lab etcd member named ${name}`, {
        remediation: `members: ${this.#members.map((m) => m.name).join(', ')}`,
      });
    }
    return r;
  }

  /** Running voters, optionally excluding one: the members that can serve membership changes. */
  #servingVoters(exclude?: MemberRec): MemberRec[] {
    const voters = this.#members.filter((m) => m.state === 'running' && !m.isLearner && m !== exclude);
    if (voters.length === 0) {
      throw new FerryError('usage', 'no running voting member to send the request to', {
        remediation: 'start or restart a voting member first',
      });
    }
    return voters;
  }

  /**
   * Runs a cluster-API call on one running voter at a time (rotating on each retry), retrying
   * `unhealthy cluster` and transient errors with backoff until the deadline.
   */
  async #onVoter<T>(
    what: string,
    fn: (client: Etcd3, attempt: number) => Promise<T>,
    opts: { exclude?: MemberRec; retryIf?: (err: unknown) => boolean; timeoutMs?: number } = {},
  ): Promise<T> {
    return retrying(
      what,
      (attempt) => {
        const voters = this.#servingVoters(opts.exclude);
        const target = voters[(attempt - 1) % voters.length]!;
        return withEtcdClient([clientUrl(target.ip)], this.#credentials(), (c) => fn(c, attempt));
      },
      {
        retryIf: opts.retryIf ?? isRetryableMembershipError,
        timeoutMs: opts.timeoutMs ?? MEMBERSHIP_TIMEOUT_MS,
        initialDelayMs: 250,
        maxDelayMs: 2_000,
      },
    );
  }

  // ---- observation ---------------------------------------------------------------------------

  members(): LabMember[] {
    return this.#members.map((r) => this.#info(r));
  }

  member(name: string): LabMember {
    return this.#info(this.#member(name));
  }

  #info(r: MemberRec): LabMember {
    return {
      name: r.name,
      ip: r.ip,
      clientUrl: clientUrl(r.ip),
      peerUrl: peerUrl(r.ip),
      id: r.id,
      version: r.minor,
      isLearner: r.isLearner,
      state: r.state,
      pid: r.proc?.running ? r.proc.pid : undefined,
      dir: r.dir,
      dataDir: r.dataDir,
    };
  }

  /** Every PID this cluster has ever spawned (to check that none survives). */
  spawnedPids(): number[] {
    return [...this.#spawned];
  }

  /** Client TLS files (kubeadm's apiserver-etcd-client, etcd CA) for other components. */
  clientTls(): ClientTlsFiles {
    return {
      caFile: join(this.pkiDir, 'etcd', 'ca.crt'),
      certFile: join(this.pkiDir, 'apiserver-etcd-client.crt'),
      keyFile: join(this.pkiDir, 'apiserver-etcd-client.key'),
    };
  }

  /** Client URLs of running members; learners only when asked (they reject most RPCs). */
  endpoints(opts: { learners?: boolean; names?: string[] } = {}): string[] {
    return this.#members
      .filter((m) => m.state === 'running' && (opts.learners || !m.isLearner))
      .filter((m) => !opts.names || opts.names.includes(m.name))
      .map((m) => clientUrl(m.ip));
  }

  /** An etcd3 client (fault handling off) on the given or all running voters. The caller closes it. */
  client(names?: string[]): Etcd3 {
    this.#assertUsable();
    return etcdClient(this.endpoints(names ? { names, learners: true } : {}), this.#credentials());
  }

  /** The member list as a running voter sees it, read linearizably. */
  async memberList(): Promise<IMember[]> {
    this.#assertUsable();
    const res = await this.#onVoter('member list', (c) => c.cluster.memberList({ linearizable: true }), {
      retryIf: (err) => TRANSIENT.test(errorText(err)),
      timeoutMs: 15_000,
    });
    return res.members;
  }

  /** Maintenance.Status of every running member (learners included), in member order. */
  async status(): Promise<MemberStatus[]> {
    this.#assertUsable();
    const running = this.#members.filter((m) => m.state === 'running');
    return Promise.all(
      running.map(async (r): Promise<MemberStatus> => {
        try {
          const s = await this.#statusOf(r);
          return {
            name: r.name,
            ok: true,
            id: s.header.member_id,
            leaderId: s.leader,
            isLearner: s.isLearner,
            raftIndex: s.raftIndex,
            raftTerm: s.raftTerm,
            raftAppliedIndex: s.raftAppliedIndex,
            version: s.version,
            errors: s.errors,
          };
        } catch (err) {
          return { name: r.name, ok: false, error: errorText(err) };
        }
      }),
    );
  }

  /** The member that reports itself as leader (highest term wins a transient tie), if any. */
  async leader(): Promise<string | undefined> {
    const self = (await this.status()).filter(
      (s): s is Extract<MemberStatus, { ok: true }> => s.ok && s.leaderId !== '0' && s.leaderId === s.id,
    );
    self.sort((a, b) => (BigInt(b.raftTerm) > BigInt(a.raftTerm) ? 1 : -1));
    return self[0]?.name;
  }

  async waitForLeader(timeoutMs = 15_000): Promise<string> {
    return retrying(
      'waiting for a lab etcd leader',
      async () => {
        const l = await this.leader();
        if (!l) throw new Error('no leader yet');
        return l;
      },
      { retryIf: () => true, timeoutMs, initialDelayMs: 100, maxDelayMs: 500 },
    );
  }

  /** `GET /version` on the member: its server version and the cluster version it sees. */
  async version(name: string): Promise<EtcdVersion> {
    this.#assertUsable();
    return fetchVersion(clientUrl(this.#member(name).ip), this.#credentials());
  }

  // ---- membership ------------------------------------------------------------------------------

  /**
   * `member add` through the etcd API (a voter or a learner), retrying `unhealthy cluster`; issues
   * the member's certificates. The member is not started: see startMember.
   */
  async addMember(opts: { name?: string; version?: EtcdMinor; learner?: boolean } = {}): Promise<LabMember> {
    const m = await this.reserveMember(opts);
    return this.#add(this.#member(m.name));
  }

  /**
   * Allots a member's name and address without adding it to the cluster (a machine that is still
   * booting): `addReserved` adds it later, `forgetReserved` drops it. Until then it is listed
   * `unstarted` with no id, and etcd itself knows nothing of it.
   */
  async reserveMember(opts: { name?: string; version?: EtcdMinor; learner?: boolean }): Promise<LabMember> {
    this.#assertUsable();
    const minor = opts.version ?? this.#defaultVersion;
    await locateEtcd(minor); // fail before changing the cluster, not after
    const r = this.#newRecord(opts.name, minor, 'existing');
    r.isLearner = opts.learner ?? true;
    return this.member(r.name);
  }

  async addReserved(name: string): Promise<LabMember> {
    this.#assertUsable();
    const r = this.#member(name);
    if (r.id !== undefined || r.state !== 'unstarted')
      throw new FerryError('internal', `lab etcd member ${name} is not a reservation (${r.state})`);
    return this.#add(r);
  }

  forgetReserved(name: string): void {
    const r = this.#members.find((m) => m.name === name);
    if (r && r.id === undefined && r.state === 'unstarted') this.#members.splice(this.#members.indexOf(r), 1);
  }

  async #add(r: MemberRec): Promise<LabMember> {
    const res = await this.#addToCluster(r).catch((err: unknown) => {
      // Not in the cluster: forget it (its address is not reused).
      this.#members.splice(this.#members.indexOf(r), 1);
      throw err;
    });
    r.id = res.member.ID;
    r.initialCluster = res.members.map((m) => ({
      name: m.name || this.#members.find((x) => x.id === m.ID)?.name || `unstarted-${m.ID}`,
      peerUrl: m.peerURLs[0] ?? '',
    }));
    return this.member(r.name);
  }

  async #addToCluster(r: MemberRec): Promise<{ member: IMember; members: IMember[] }> {
    await this.#issueMemberCerts(r);
    return this.#onVoter(`member add ${r.name}`, async (c, attempt) => {
      try {
        return await c.cluster.memberAdd({ peerURLs: [peerUrl(r.ip)], isLearner: r.isLearner });
      } catch (err) {
        // A retried add whose first attempt was applied after all: find it instead of adding twice.
        if (attempt > 1 && /peerURL exists/i.test(errorText(err))) {
          const list = await c.cluster.memberList({ linearizable: true });
          const m = list.members.find((x) => x.peerURLs.includes(peerUrl(r.ip)));
          if (m) return { member: m, members: list.members };
        }
        throw err;
      }
    });
  }

  /** Starts an added member with `--initial-cluster-state existing` and waits until it answers. */
  async startMember(name: string): Promise<LabMember> {
    this.#assertUsable();
    const r = this.#member(name);
    if (r.state !== 'unstarted') {
      throw new FerryError('usage', `lab etcd member ${name} is ${r.state}, not unstarted`, {
        remediation: 'use restart() for a member that has run before',
      });
    }
    await this.#spawn(r, await locateEtcd(r.minor));
    await this.#waitAnswering(r);
    return this.member(name);
  }

  /** `member promote`, retried until the learner has caught up with the leader. */
  async promote(name: string): Promise<LabMember> {
    this.#assertUsable();
    const r = this.#member(name);
    if (!r.id) throw new FerryError('usage', `lab etcd member ${name} has no ID yet`);
    const id = r.id;
    await this.#onVoter(`member promote ${name}`, (c) => c.cluster.memberPromote({ ID: id }), {
      exclude: r,
      retryIf: (err) => LEARNER_NOT_IN_SYNC.test(errorText(err)) || isRetryableMembershipError(err),
    });
    r.isLearner = false;
    return this.member(name);
  }

  /**
   * `member remove`, sent to another member (sent to the removed one the reply can be `server
   * stopped` although the removal was applied). The removed member shuts itself down; it is killed
   * if it has not within 10 s.
   */
  async removeMember(name: string): Promise<void> {
    this.#assertUsable();
    const r = this.#member(name);
    if (!r.id) throw new FerryError('usage', `lab etcd member ${name} has no ID yet`);
    const id = r.id;
    await this.#onVoter(
      `member remove ${name}`,
      async (c, attempt) => {
        try {
          await c.cluster.memberRemove({ ID: id });
        } catch (err) {
          // An earlier attempt was applied although its reply was lost.
          if (attempt > 1 && /member not found/i.test(errorText(err))) return;
          throw err;
        }
      },
      { exclude: r },
    );
    const proc = r.proc;
    r.state = 'removed';
    if (proc?.running) {
      const timer = sleep(10_000, 'timeout' as const, { ref: false });
      if ((await Promise.race([proc.exited, timer])) === 'timeout') await proc.kill();
    }
  }

  /** Moves leadership to `name`, sending MoveLeader to the current leader (the only one that may). */
  async moveLeader(name: string): Promise<void> {
    this.#assertUsable();
    const target = this.#member(name);
    if (target.state !== 'running' || target.isLearner || !target.id) {
      throw new FerryError(
        'usage',
        `cannot move leadership to ${name}: it is ${target.isLearner ? 'a learner' : target.state}`,
        {
          remediation: 'choose a running voting member',
        },
      );
    }
    const targetID = target.id;
    await retrying(
      `move leader to ${name}`,
      async () => {
        const leaderName = await this.leader();
        if (leaderName === name) return;
        if (!leaderName) throw new Error('no leader');
        const leader = this.#member(leaderName);
        await withEtcdClient([clientUrl(leader.ip)], this.#credentials(), (c) =>
          c.maintenance.moveLeader({ targetID }),
        );
        if ((await this.leader()) !== name) throw new Error('leader changed elsewhere');
      },
      {
        retryIf: (err) =>
          /no leader|leader changed|not leader/i.test(errorText(err)) || TRANSIENT.test(errorText(err)),
        timeoutMs: 15_000,
        initialDelayMs: 100,
        maxDelayMs: 1_000,
      },
    );
  }

  // ---- processes -------------------------------------------------------------------------------

  /** SIGKILL: the member vanishes without a goodbye. */
  async crash(name: string): Promise<void> {
    const r = this.#member(name);
    if (!r.proc?.running) return;
    r.state = 'crashed';
    await r.proc.kill();
  }

  /** SIGTERM (etcd hands leadership over when it can), SIGKILL after `graceMs`. */
  async stop(name: string, graceMs = 10_000): Promise<void> {
    const r = this.#member(name);
    if (!r.proc?.running) return;
    r.state = 'stopped';
    await r.proc.stop(graceMs);
  }

  /** Starts a member that has run before again on its data dir (stopping it first if running). */
  async restart(name: string): Promise<LabMember> {
    this.#assertUsable();
    const r = this.#member(name);
    if (r.state === 'removed' || r.state === 'unstarted') {
      throw new FerryError('usage', `cannot restart lab etcd member ${name}: it is ${r.state}`, {
        remediation:
          r.state === 'removed'
            ? 'a removed member cannot come back under its old ID; add a new member instead'
            : 'use startMember() for its first start',
      });
    }
    if (r.proc?.running) await this.stop(name);
    await this.#spawn(r, await locateEtcd(r.minor));
    await this.#waitAnswering(r);
    return this.member(name);
  }

  /** Kills every member and removes the cluster directory (unless keepDir). Idempotent. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await Promise.all(this.#members.map((r) => r.proc?.kill()));
    untrackLab(this);
    if (!this.keepDir) await Promise.all(this.dirs.map((d) => rm(d, { recursive: true, force: true })));
  }
}
