/**
 * API probes through the control-plane endpoint (the load balancer), as a client of the cluster
 * sees it: `GET /readyz`, and a write-then-read of a ConfigMap (the write must be readable back
 * at once, whichever apiserver instance answers the read).
 */
import { type KubeRequester, MERGE_PATCH } from '../kube/request.js';
import { ProbeLoop } from './loop.js';

export interface ApiProbeOptions {
  requester: KubeRequester;
  /** Pause between attempts. Default 100 ms. */
  intervalMs?: number;
  /** Per attempt. Default 2 s. */
  timeoutMs?: number;
  onSample?: ConstructorParameters<typeof ProbeLoop>[0]['onSample'];
}

export function readyzProbe(opts: ApiProbeOptions): ProbeLoop {
  const timeoutMs = opts.timeoutMs ?? 2_000;
  return new ProbeLoop({
    name: 'api-readyz',
    description: `GET /readyz through ${opts.requester.address} (a new connection each time)`,
    intervalMs: opts.intervalMs ?? 100,
    timeoutMs,
    onSample: opts.onSample,
    attempt: async () => {
      await opts.requester.request('GET', '/readyz', { raw: true, timeoutMs });
    },
  });
}

export interface WriteProbeOptions extends ApiProbeOptions {
  runId: string;
  /** Default "default". */
  namespace?: string;
}

export function writeReadProbe(opts: WriteProbeOptions): ProbeLoop {
  const timeoutMs = opts.timeoutMs ?? 2_000;
  const ns = opts.namespace ?? 'default';
  const name = `ferry-probe-${opts.runId.slice(0, 8).toLowerCase()}`;
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  let created = false;
  let seq = 0;
  return new ProbeLoop({
    name: 'api-write-read',
    description: `write ConfigMap ${ns}/${name} then read it back through ${opts.requester.address}`,
    intervalMs: opts.intervalMs ?? 100,
    timeoutMs,
    onSample: opts.onSample,
    attempt: async () => {
      const n = String(++seq);
      if (!created) {
        try {
          await opts.requester.request('POST', path, {
            body: {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name, namespace: ns },
              data: { seq: n },
            },
            timeoutMs,
          });
        } catch (err) {
          if ((err as { status?: number }).status !== 409) throw err;
          await patch(n);
        }
        created = true;
      } else {
        await patch(n);
      }
      const got = (await opts.requester.request('GET', `${path}/${name}`, { timeoutMs })) as {
        data?: { seq?: string };
      };
      if (got.data?.seq !== n) throw new Error(`read back seq ${got.data?.seq ?? 'none'} after writing ${n}`);
    },
    finish: async () => {
      await opts.requester.request('DELETE', `${path}/${name}`, { timeoutMs: 5_000 }).catch(() => undefined);
      return { writes: seq };
    },
  });

  async function patch(n: string): Promise<void> {
    await opts.requester.request('PATCH', `${path}/${name}`, {
      body: { data: { seq: n } },
      contentType: MERGE_PATCH,
      timeoutMs,
    });
  }
}
