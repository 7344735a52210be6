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
  #endpoints: string[];
  #current = 0;

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
        try {
          await me
            .#client(ep, timeoutMs)
            .put(`${prefix}${String(n).padStart(9, '0')}`)
            .value(String(n));
          acked.push(n);
        } catch (err) {
          // Next write goes to the next member: a dead one must not stretch the gap.
          me.#current++;
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

  /** Writes go to these members from now on (called before a member is removed). */
  setEndpoints(endpoints: string[]): void {
    if (endpoints.length === 0) return;
    this.#endpoints = [...endpoints];
    this.#current = 0;
  }

  endpoints(): string[] {
    return [...this.#endpoints];
  }

  close(): void {
    for (const c of this.#clients.values()) c.close();
    this.#clients.clear();
  }
}
