/**
 * The etcd write probe's own process (see etcd-process.ts): it writes, and nothing else runs on its
 * event loop, so a gap it measures is etcd's, not a pause of the run (journal fsyncs, a large JSON
 * document, the lab's servers when a rehearsal holds the lab in the same process).
 *
 * Messages from the parent: {type:'start', config}, {type:'endpoints', endpoints}, {type:'stop'}.
 * To the parent: {type:'summary', summary} now and then, and {type:'done', summary, samples}.
 */
import type { ProbeSample, ProbeSummary } from '../../ports/run.js';
import { dropServernameWarning } from '../../util/warnings.js';
import { readTls } from '../etcd/admin.js';
import { EtcdWriteProbe } from './etcd.js';

dropServernameWarning();

export interface EtcdChildConfig {
  endpoints: string[];
  caFile: string;
  certFile: string;
  keyFile: string;
  runId: string;
  intervalMs?: number;
  timeoutMs?: number;
}

export type ToChild =
  | { type: 'start'; config: EtcdChildConfig }
  | { type: 'endpoints'; endpoints: string[]; id: number }
  | { type: 'stop' };
export type FromChild =
  | { type: 'summary'; summary: ProbeSummary }
  | { type: 'done'; summary: ProbeSummary; samples: ProbeSample[] }
  /** The `endpoints` message `id` is in force (see EtcdWriteProbe.setEndpoints). */
  | { type: 'steered'; id: number }
  | { type: 'error'; message: string };

const send = (m: FromChild, then?: () => void) => process.send?.(m, undefined, {}, () => then?.());

let probe: EtcdWriteProbe | undefined;
let timer: NodeJS.Timeout | undefined;

process.on('message', (raw: unknown) => {
  const m = raw as ToChild;
  void (async () => {
    try {
      if (m.type === 'start' && !probe) {
        const c = m.config;
        probe = new EtcdWriteProbe({
          endpoints: c.endpoints,
          tls: readTls(c),
          runId: c.runId,
          ...(c.intervalMs !== undefined && { intervalMs: c.intervalMs }),
          ...(c.timeoutMs !== undefined && { timeoutMs: c.timeoutMs }),
        });
        probe.start();
        timer = setInterval(() => probe && send({ type: 'summary', summary: probe.summary() }), 1_000);
      } else if (m.type === 'endpoints') {
        await probe?.setEndpoints(m.endpoints);
        send({ type: 'steered', id: m.id });
      } else if (m.type === 'stop') {
        clearInterval(timer);
        const summary = probe ? await probe.stop() : undefined;
        // Disconnect only once the result is on its way.
        if (summary) send({ type: 'done', summary, samples: probe!.samples() }, () => process.disconnect?.());
        else process.disconnect?.();
      }
    } catch (err) {
      send({ type: 'error', message: (err as Error).message });
    }
  })();
});

// The parent went away (killed run): stop writing.
process.on('disconnect', () => {
  clearInterval(timer);
  void probe?.stop().finally(() => process.exit(0));
  if (!probe) process.exit(0);
});
