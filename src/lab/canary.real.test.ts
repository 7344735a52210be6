/**
 * The lab's canary (docs/design.md "The lab") on a real lab of examples/lab-cluster: its pods are real HTTP
 * listeners, Ready only once they answer, behind a Service front fed from EndpointSlices; a pod
 * evicted under a request probe every 10 ms costs no request, because the endpoint leaves the
 * front before the preStop sleep ends. Without a preStop and with a slow front, the same probe
 * sees the failures. Subnet 127.0.120.x belongs to this file.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestProbe } from '../adapters/probes/http.js';
import { loadSnapshot } from '../snapshot/load.js';
import { scaled } from '../util/testing-slowness.js';
import type { KObj } from './apiserver/object.js';
import { LabCluster } from './cluster.js';
import { missingReason } from './etcd/binaries.js';
import { ServiceFront } from './lb/service-front.js';
import { CANARY_NAMESPACE, LAB_OWNED_LABEL, RUNTIME_HTTP, RUNTIME_LABEL } from './nodes/canary.js';
import { LabApiError } from './nodes/client.js';
import { isPodReady } from './nodes/world.js';
import { skipFor } from './testing-binaries.js';

const SUBNET = 120;
const missing = await missingReason('3.4');

let lab: LabCluster;
let dir: string;

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, timeout: 2_000 }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = scaled(30_000)): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const pods = (selector: string) =>
  lab.client.list<KObj>(`/api/v1/namespaces/${CANARY_NAMESPACE}/pods`, { labelSelector: selector });

/** Evicts through the Eviction API, retrying while the budget refuses (429), as a drain does. */
async function evict(pod: KObj): Promise<void> {
  const path = `/api/v1/namespaces/${CANARY_NAMESPACE}/pods/${pod.metadata.name}/eviction`;
  for (;;) {
    try {
      await lab.client.create(path, {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: pod.metadata.name, namespace: CANARY_NAMESPACE },
      });
      return;
    } catch (err) {
      if (!(err instanceof LabApiError) || err.status !== 429) throw err;
      await sleep(100);
    }
  }
}

describe.skipIf(skipFor(missing))('the lab canary', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-lab-canary-'));
    const snapshot = await loadSnapshot('examples/lab-cluster', { strictPki: false });
    lab = await LabCluster.fromSnapshot(snapshot, { dir, subnet: SUBNET, source: 'examples/lab-cluster' });
    const settled = await lab.waitSettled(scaled(60_000));
    expect(settled.pending).toEqual([]);
  }, 180_000);

  afterAll(async () => {
    await lab?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs 3 lab-owned pods as HTTP listeners, Ready only once they answer, behind the front', async () => {
    const canary = await pods('app=canary');
    expect(canary).toHaveLength(3);
    for (const p of canary) {
      expect(p.metadata.labels?.[LAB_OWNED_LABEL]).toBe('ferry-lab');
      expect(isPodReady(p)).toBe(true);
      const address = lab.runtime.addressOf(p.metadata.uid!);
      expect(address, p.metadata.name).toMatch(/^127\.0\.120\.\d+:\d+$/);
      expect(await get(`http://${address}/`)).toEqual({
        status: 200,
        body: `ferry-lab/${p.metadata.name}\n`,
      });
    }
    // Every Ready pod's readiness came after its listener answered.
    const events = lab.runtime.events();
    for (const p of canary) {
      const name = `ferry-lab/${p.metadata.name}`;
      const ready = events.find((e) => e.pod === name && e.what === 'ready');
      const started = events.find((e) => e.pod === name && e.what === 'started');
      expect(ready!.at).toBeGreaterThanOrEqual(started!.at);
    }
    const info = lab.info().canary!;
    expect(info.url).toMatch(/^http:\/\/127\.0\.120\.254:\d+$/);
    // Round-robin over the three endpoints: each answers in turn.
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) seen.add((await get(info.url)).body);
    expect(seen).toEqual(new Set(canary.map((p) => `ferry-lab/${p.metadata.name}\n`)));
    // kube-proxy's view: one EndpointSlice, three ready endpoints.
    const slices = await lab.client.list<KObj>(
      `/apis/discovery.k8s.io/v1/namespaces/${CANARY_NAMESPACE}/endpointslices`,
    );
    expect(slices).toHaveLength(1);
    const ready = (slices[0]!.endpoints as { conditions: { ready: boolean } }[]).filter(
      (e) => e.conditions.ready,
    );
    expect(ready).toHaveLength(3);
  });

  it('evicting canary pods under a request probe every 10 ms fails no request', async () => {
    const probe = requestProbe({ url: lab.info().canary!.url, timeoutMs: scaled(1_000) });
    probe.start();
    const before = await pods('app=canary');
    try {
      await sleep(300);
      for (const p of before.slice(0, 2)) await evict(p);
      await until('two replacements Ready', async () => {
        const now = (await pods('app=canary')).filter((p) => !p.metadata.deletionTimestamp);
        return (
          now.filter(isPodReady).length === 3 &&
          now.every((p) => !before.slice(0, 2).some((b) => b.metadata.uid === p.metadata.uid))
        );
      });
      await until('the evicted pods gone', async () => (await pods('app=canary')).length === 3);
    } finally {
      await probe.stop();
    }
    const s = probe.summary();
    expect(s.failures, JSON.stringify(s.errors)).toBe(0);
    expect(s.attempts).toBeGreaterThan(100);
    expect(Number(s.extra?.['p99LatencyMs'])).toBeGreaterThan(0);
    // The order that makes it so: each evicted pod left the front before its listener got SIGTERM.
    const changes = lab.canaryFront!.changes();
    for (const p of before.slice(0, 2)) {
      const sigterm = lab.runtime
        .events()
        .find((e) => e.pod === `ferry-lab/${p.metadata.name}` && e.what === 'sigterm');
      expect(sigterm?.address).toBeDefined();
      const routing = changes.filter((c) => c.at <= sigterm!.at).at(-1);
      expect(routing?.backends).not.toContain(sigterm!.address);
    }
  }, 120_000);

  it('without a preStop and with a slow front, the same probe sees failed requests', async () => {
    const ns = CANARY_NAMESPACE;
    const labels = { app: 'bare' };
    await lab.client.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'bare', namespace: ns },
      spec: {
        replicas: 3,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels: { ...labels, [RUNTIME_LABEL]: RUNTIME_HTTP } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [
              { name: 'http', image: 'ferry.lab/canary:1', ports: [{ name: 'http', containerPort: 8080 }] },
            ],
          },
        },
      },
    });
    await lab.client.create(`/api/v1/namespaces/${ns}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'bare', namespace: ns },
      spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    await until(
      'three bare pods Ready',
      async () => (await pods('app=bare')).filter(isPodReady).length === 3,
    );
    const front = await ServiceFront.start({
      client: lab.client,
      namespace: ns,
      service: 'bare',
      host: `127.0.${SUBNET}.254`,
      resolve: (uid) => lab.runtime.addressOf(uid),
      propagationDelayMs: 1_500,
    });
    try {
      await until('the bare front routes to 3', async () => front.lb.healthy().length === 3);
      const probe = requestProbe({ url: front.url, timeoutMs: scaled(1_000) });
      probe.start();
      const victim = (await pods('app=bare'))[0]!;
      await lab.client.delete(`/api/v1/namespaces/${ns}/pods/${victim.metadata.name}`);
      await sleep(2_000);
      const s = await probe.stop();
      expect(s.failures).toBeGreaterThan(0);
      expect(s.longestFailureWindowMs).toBeGreaterThan(0);
    } finally {
      await front.stop();
    }
  }, 120_000);
});
