/**
 * etcd write probe: sequential puts, each with a 300 ms deadline (test-infra.md measured the swaps
 * this way), one key per write so that at the end every acknowledged write can be read back: "no
 * acknowledged write lost" is checked, not assumed. The orchestrator steers it away from a member
 * before that member is removed (`setEndpoints`), as a kube-apiserver is taken out of service first.
 */
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import type { EtcdProbeControl } from '../../run/ports.js';
import type { EtcdTls } from '../etcd/admin.js';
import { ProbeLoop } from './loop.js';

export interface EtcdProbeOptions {
  endpoints: string[];
  tls: EtcdTls;
  /** Distinguishes this run's keys. */
  runId: string;
  /** Pause between writes. Default 0 (back to back). */
  intervalMs?: number;
  /** Per write. Default 300 ms. */
  timeoutMs?: number;
  /** Delete the probe's keys after checking them. Default true. */
  cleanup?: boolean;
  onSample?: ConstructorParameters<typeof ProbeLoop>[0]['onSample'];
}

export const ETCD_PROBE_PREFIX = 'ferry-probe/';

export class EtcdWriteProbe extends ProbeLoop implements EtcdProbeControl {
  readonly #clients = new Map<string, Etcd3>();
  #tls: EtcdTls;
  readonly #timeoutMs: number;
  #endpoints: string[];
  #current = 0;
  /** The write in flight and the member it went to. */
  #inflight: { endpoint: string; done: Promise<unknown> } | undefined;

  constructor(opts: EtcdProbeOptions) {
    const prefix = `${ETCD_PROBE_PREFIX}${opts.runId}/`;
    const timeoutMs = opts.timeoutMs ?? 300;
    const acked: number[] = [];
    let seq = 0;
    super({
      name: 'etcd-write',
      description: `sequential etcd puts (${timeoutMs} ms deadline each) to a member that stays; gap = time between two acknowledged writes`,
      intervalMs: opts.intervalMs ?? 0,
      timeoutMs,
      onSample: opts.onSample,
      attempt: async () => {
        const me = this!;
        const n = ++seq;
        const ep = me.#endpoints[me.#current % me.#endpoints.length]!;
        const put = me
          .#client(ep, timeoutMs)
          .put(`${prefix}${String(n).padStart(9, '0')}`)
          .value(String(n))
          .exec(); // once: each then() of the builder would send the put again
        me.#inflight = { endpoint: ep, done: put.catch(() => undefined) };
        try {
          await put;
          acked.push(n);
        } catch (err) {
          // Next write goes to the next member: a dead one must not stretch the gap.
          if (me.#endpoints.includes(ep)) me.#current++;
          throw err;
        }
      },
      finish: async () => {
        const me = this!;
        const found = new Set<number>();
        let lost = -1;
        for (const ep of me.#endpoints) {
          try {
            const keys = await me.#client(ep, 10_000).getAll().prefix(prefix).keys();
            for (const k of keys) found.add(Number(k.slice(prefix.length)));
            lost = acked.filter((n) => !found.has(n)).length;
            if (opts.cleanup ?? true) await me.#client(ep, 10_000).delete().prefix(prefix);
            break;
          } catch {
            // try the next member
          }
        }
        me.close();
        return { acknowledged: acked.length, lost, checked: lost >= 0 ? 'yes' : 'no member answered' };
      },
    });
    this.#endpoints = [...opts.endpoints];
    this.#tls = opts.tls;
    this.#timeoutMs = timeoutMs;
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
