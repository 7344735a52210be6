/**
 * etcd write probe: sequential puts, each with a 300 ms deadline (test-infra.md measured the swaps
 * this way), one key per write so that at the end every acknowledged write can be read back: "no
 * acknowledged write lost" is checked, not assumed. The orchestrator keeps it on the etcd leader
 * (`setEndpoints`, leader first): a write to the leader is never forwarded, so a leadership
 * handover refuses it at once instead of dropping it unseen, and the gap is the time the cluster
 * could commit nothing. Writes forwarded by followers are what the API probes measure, through
 * the apiservers that make them.
 */
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import type { EtcdProbeControl } from '../../ports/run.js';
import type { EtcdTls } from '../etcd/admin.js';
import { ProbeLoop } from './loop.js';

export interface EtcdProbeOptions {
  endpoints: string[];
  tls: EtcdTls;
  /** Distinguishes this run's keys. */
  runId: string;
  /**
   * Pause between writes. Default 10 ms: about 100 writes a second, gentle on a production etcd.
   * The lab and the benchmarks write back to back (0).
   */
  intervalMs?: number;
  /** Per write. Default 300 ms. */
  timeoutMs?: number;
  /** Delete the probe's keys after checking them. Default true. */
  cleanup?: boolean;
  /**
   * Check the acknowledged writes every this many while running, and delete them once checked, so
   * a run of hours leaves no pile of keys in etcd (and no check deletes a large range at once).
   * Default 1,000; 0: only at the end.
   */
  verifyEvery?: number;
  onSample?: ConstructorParameters<typeof ProbeLoop>[0]['onSample'];
}

export const ETCD_PROBE_PREFIX = 'ferry-probe/';

/** A member's immediate refusal while leadership changes hands (raft, etcdserver). */
const REFUSED = /proposal dropped|leader changed|no leader|not leader/i;

export class EtcdWriteProbe extends ProbeLoop implements EtcdProbeControl {
  readonly #clients = new Map<string, Etcd3>();
  #tls: EtcdTls;
  readonly #timeoutMs: number;
  readonly #prefix: string;
  readonly #cleanup: boolean;
  #endpoints: string[];
  #current = 0;
  /** The write in flight and the member it went to. */
  #inflight: { endpoint: string; done: Promise<unknown> } | undefined;
  /** Acknowledged sequence numbers not checked yet, ascending. */
  #acked: number[] = [];
  #ackedTotal = 0;
  #lost = 0;
  /** Every write up to this sequence number has been checked. */
  #checkedUpTo = 0;
  readonly #verifyEvery: number;
  #verifying: Promise<unknown> | undefined;

  constructor(opts: EtcdProbeOptions) {
    const timeoutMs = opts.timeoutMs ?? 300;
    let seq = 0;
    super({
      name: 'etcd-write',
      description: `sequential etcd puts (${timeoutMs} ms deadline each) to the leader; gap = time between two acknowledged writes`,
      intervalMs: opts.intervalMs ?? 10,
      timeoutMs,
      onSample: opts.onSample,
      attempt: async () => {
        const me = this!;
        const n = ++seq;
        const ep = me.#endpoints[me.#current % me.#endpoints.length]!;
        // exec() once: each then() of the builder would send the put again.
        const put = me.#client(ep, timeoutMs).put(me.#key(n)).value(String(n)).exec();
        me.#inflight = { endpoint: ep, done: put.catch(() => undefined) };
        try {
          await put;
          me.#acked.push(n);
          me.#ackedTotal++;
          if (me.#verifyEvery > 0 && me.#acked.length >= me.#verifyEvery && !me.#verifying) {
            // Beside the writes, not between them: a check must not be a gap.
            me.#verifying = me.#verify(n).finally(() => {
              me.#verifying = undefined;
            });
          }
        } catch (err) {
          // Next write goes to the next member: a dead one must not stretch the gap. A member that
          // refused at once is alive and will take the next write (the leader, mid-handover).
          if (me.#endpoints.includes(ep) && !REFUSED.test(String((err as Error)?.message))) me.#current++;
          throw err;
        }
      },
      finish: async () => {
        const me = this!;
        await me.#verifying;
        const checked = await me.#verify(seq);
        if (checked && me.#cleanup) {
          // Late writes that timed out but were applied after all, and anything a check missed.
          await me.#onAnyMember((c) => c.delete().prefix(me.#prefix).exec()).catch(() => undefined);
        }
        me.close();
        return {
          acknowledged: me.#ackedTotal,
          lost: checked ? me.#lost : -1,
          checked: checked ? 'yes' : 'no member answered',
        };
      },
    });
    this.#endpoints = [...opts.endpoints];
    this.#tls = opts.tls;
    this.#timeoutMs = timeoutMs;
    this.#prefix = `${ETCD_PROBE_PREFIX}${opts.runId}/`;
    this.#cleanup = opts.cleanup ?? true;
    this.#verifyEvery = opts.verifyEvery ?? 1_000;
  }

  #key(n: number): string {
    return `${this.#prefix}${String(n).padStart(9, '0')}`;
  }

  /**
   * Reads back the keys of writes (checkedUpTo, upTo], counts acknowledged ones that are missing,
   * and deletes the range (when cleaning up). False when no member answered: the range stays for
   * the next check.
   */
  async #verify(upTo: number): Promise<boolean> {
    if (upTo <= this.#checkedUpTo) return true;
    const range = { start: this.#key(this.#checkedUpTo + 1), end: this.#key(upTo + 1) };
    try {
      const keys = await this.#onAnyMember((c) => c.getAll().inRange(range).keys());
      const found = new Set(keys.map((k) => Number(k.slice(this.#prefix.length))));
      const due = this.#acked.filter((n) => n <= upTo);
      this.#lost += due.filter((n) => !found.has(n)).length;
      this.#acked = this.#acked.slice(due.length);
      this.#checkedUpTo = upTo;
      if (this.#cleanup)
        await this.#onAnyMember((c) => c.delete().inRange(range).exec()).catch(() => undefined);
      return true;
    } catch {
      return false;
    }
  }

  /** `fn` on the first member that answers, in the probe's order. */
  async #onAnyMember<T>(fn: (c: Etcd3) => Promise<T>): Promise<T> {
    let last: unknown;
    for (const ep of this.#endpoints) {
      try {
        return await fn(this.#client(ep, 10_000));
      } catch (err) {
        last = err;
      }
    }
    throw last ?? new Error('no etcd endpoint');
  }

  #client(endpoint: string, timeoutMs: number): Etcd3 {
    const key = `${endpoint}|${timeoutMs}`;
    let c = this.#clients.get(key);
    if (!c) {
      c = new Etcd3({
        hosts: [endpoint],
        credentials: { rootCertificate: this.#tls.ca, certChain: this.#tls.cert, privateKey: this.#tls.key },
        dialTimeout: 1_000,
        faultHandling: { host: () => noop, global: noop },
        defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeoutMs }),
      });
      this.#clients.set(key, c);
    }
    return c;
  }

  /**
   * Writes go to these members, the first one first, from now on (called before leadership moves
   * and before a member is removed). Resolves once the next write will use them: connections to
   * the new members are open, and a write still in flight to a member left out has answered, so
   * that nothing is on its way to a member about to go.
   */
  async setEndpoints(endpoints: string[]): Promise<void> {
    if (endpoints.length === 0) return;
    // Connect first: a TLS handshake must not be the first write's cost.
    await Promise.all(
      endpoints.map((ep) =>
        this.#client(ep, this.#timeoutMs)
          .maintenance.status()
          .catch(() => undefined),
      ),
    );
    this.#endpoints = [...endpoints];
    this.#current = 0;
    const inflight = this.#inflight;
    if (inflight && !endpoints.includes(inflight.endpoint)) await inflight.done;
  }

  endpoints(): string[] {
    return [...this.#endpoints];
  }

  close(): void {
    for (const c of this.#clients.values()) c.close();
    this.#clients.clear();
  }
}
