/**
 * The probes of a run, started together before the first step and stopped after the last: API
 * /readyz and write-then-read through the endpoint, and the etcd write probe.
 */

import type { Probe, ProbeSummary } from '../../ports/run.js';
import type { EtcdTls } from '../etcd/admin.js';
import type { KubeRequester } from '../kube/request.js';
import { readyzProbe, writeReadProbe } from './api.js';
import { EtcdWriteProbe } from './etcd.js';

export interface ProbeSetOptions {
  runId: string;
  api?: { requester: KubeRequester; intervalMs?: number; timeoutMs?: number };
  etcd?: { endpoints: string[]; tls: EtcdTls; intervalMs?: number; timeoutMs?: number };
}

export class ProbeSet {
  readonly probes: Probe[];
  readonly etcd: EtcdWriteProbe | undefined;
  #summaries: ProbeSummary[] | undefined;

  constructor(opts: ProbeSetOptions) {
    const probes: Probe[] = [];
    if (opts.api) {
      probes.push(readyzProbe(opts.api), writeReadProbe({ ...opts.api, runId: opts.runId }));
    }
    this.etcd = opts.etcd ? new EtcdWriteProbe({ ...opts.etcd, runId: opts.runId }) : undefined;
    if (this.etcd) probes.push(this.etcd);
    this.probes = probes;
  }

  start(): void {
    for (const p of this.probes) p.start();
  }

  async stop(): Promise<ProbeSummary[]> {
    this.#summaries ??= await Promise.all(this.probes.map((p) => p.stop()));
    return this.#summaries;
  }

  summaries(): ProbeSummary[] {
    return this.#summaries ?? this.probes.map((p) => p.summary());
  }

  /** One line for a live display: per probe, failures so far and the longest window. */
  line(): string {
    return this.probes
      .map((p) => {
        const s = p.summary();
        return `${s.name} ${s.attempts - s.failures}/${s.attempts} ok, longest ${s.name === 'etcd-write' ? `gap ${s.longestGapMs}` : `outage ${s.longestFailureWindowMs}`} ms`;
      })
      .join(' · ');
  }
}
