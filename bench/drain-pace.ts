/**
 * bench/drain-pace: how fast one node drains behind a maxUnavailable-1 PodDisruptionBudget, by how
 * a refused eviction (429) is retried: after a fixed 1 s (ferry before budget-aware retries), or as soon as
 * the budget allows a disruption again (the disruption controller restores it as soon as the
 * evicted pod's replacement is Ready; run/drain-nodes.ts reads the budget every 50 ms). The lab
 * API server and the lab nodes controller (scheduler, kubelets, ReplicaSets) run in this process
 * on loopback; the drain goes through the production KubeAdmin adapter. Both modes run in the
 * same process, on the same kind of node, one after the other.
 *
 *   npm run bench -- drain-pace [--pods N] [--subnet N]
 *
 * Ends with `fixed-1s/watch: X×`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeAdmin } from '../src/adapters/kube/admin.js';
import { issueClientCert } from '../src/lab/apiserver/credentials.js';
import type { KObj } from '../src/lab/apiserver/object.js';
import { startLabApi } from '../src/lab/apiserver/testing.js';
import { LabKubeClient } from '../src/lab/nodes/client.js';
import { LabNodesController } from '../src/lab/nodes/controller.js';
import { type DrainPacing, drainNodes } from '../src/run/drain-nodes.js';
import { type Bench, ms } from './lib/bench.js';

const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

const MODES: { name: string; pacing: DrainPacing }[] = [
  { name: 'fixed-1s', pacing: { kind: 'fixed', retryMs: 1_000 } },
  { name: 'watch', pacing: { kind: 'watch', pollMs: 50, fallbackMs: 1_000 } },
];

const nodeBody = (name: string, mode: string, address: string): KObj => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name, bench: mode } },
  spec: {},
  status: {
    allocatable: { cpu: '16', memory: '32Gi', pods: '110' },
    capacity: { cpu: '16', memory: '32Gi', pods: '110' },
    addresses: [{ type: 'InternalIP', address }],
  },
});

export const bench: Bench = {
  name: 'drain-pace',
  summary:
    'one node drained behind a maxUnavailable-1 PDB on the lab: fixed 1 s retry vs retry when the budget allows',
  async run(args: string[]): Promise<void> {
    const { values } = parseArgs({ args, options: { pods: { type: 'string' }, subnet: { type: 'string' } } });
    const pods = Math.max(2, Number(values.pods ?? 8));
    const host = `127.0.${Number(values.subnet ?? 112)}.1`;
    const lab = await startLabApi({ host });
    const cert = await issueClientCert(lab.ca, 'kubernetes-admin', ['system:masters']);
    const client = new LabKubeClient({
      server: lab.server.url,
      ca: lab.ca.certPem,
      cert: cert.certPem,
      key: cert.keyPem,
    });
    const dir = await mkdtemp(join(tmpdir(), 'ferry-bench-drain-'));
    await writeFile(join(dir, 'kubeconfig'), lab.kubeconfig, { mode: 0o600 });
    const admin = KubeAdmin.fromKubeconfig({ kubeconfig: join(dir, 'kubeconfig') });
    const controller = new LabNodesController({ client, intervalMs: 50, clusterCidr: '10.244.0.0/16' });
    controller.start();
    const took = new Map<string, number>();
    try {
      for (const m of MODES) {
        const ns = `pace-${m.name.replace(/[^a-z0-9]/g, '')}`;
        const old = `${ns}-old`;
        await client.create('/api/v1/namespaces', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: ns },
        });
        await client.create('/api/v1/nodes', nodeBody(old, m.name, host));
        await client.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web', namespace: ns },
          spec: {
            replicas: pods,
            selector: { matchLabels: { app: 'web' } },
            template: {
              metadata: { labels: { app: 'web' } },
              spec: {
                nodeSelector: { bench: m.name },
                terminationGracePeriodSeconds: 30,
                containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '10m' } } }],
              },
            },
          },
        });
        await client.create(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata: { name: 'web', namespace: ns },
          spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
        });
        // Every pod on the old node, Ready; then the node it moves to.
        for (;;) {
          const ready = (await admin.listPods(ns)).filter((p) => p.ready && !p.terminating);
          if (ready.length === pods) break;
          await sleep(50);
        }
        await client.create('/api/v1/nodes', nodeBody(`${ns}-new`, m.name, host));
        while (!(await admin.getNode(`${ns}-new`))?.ready) await sleep(50);
        await admin.setUnschedulable(old, true);
        const t0 = Date.now();
        await drainNodes(admin, {
          nodes: [old],
          concurrency: 1,
          timeoutMs: 600_000,
          signal: new AbortController().signal,
          evictBarePods: false,
          record: (e) => process.env['PACE_DEBUG'] && console.log(Date.now() - t0, JSON.stringify(e)),
          pacing: m.pacing,
        });
        took.set(m.name, Date.now() - t0);
        console.log(`${m.name}: ${pods} pods drained and Ready elsewhere in ${ms(took.get(m.name)!)}`);
      }
    } finally {
      await controller.stop();
      client.close();
      await lab.stop();
      await rm(dir, { recursive: true, force: true });
    }
    console.log(`fixed-1s/watch: ${(took.get('fixed-1s')! / took.get('watch')!).toFixed(2)}×`);
  },
};
