/**
 * SIGKILL in the middle of a worker batch's drain, then --resume: the batch completes, no pod is
 * evicted twice, and no node is decommissioned while it still holds a pod that is not a DaemonSet's.
 * The lab API server and the lab nodes controller live in this process; the run is a child process
 * (src/run/testing-drain-batch-child.ts: the production orchestrator, journal and KubeAdmin on a
 * plan of cordon → drain-batch → decommission made by the plan's own builders).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { issueClientCert } from '../lab/apiserver/credentials.js';
import { EvictionLog } from '../lab/apiserver/eviction-log.js';
import type { KObj } from '../lab/apiserver/object.js';
import { type LabApiFixture, startLabApi } from '../lab/apiserver/testing.js';
import { LabKubeClient } from '../lab/nodes/client.js';
import { LabNodesController } from '../lab/nodes/controller.js';
import { NORMAL } from '../lab/nodes/world.js';
import { until } from '../util/testing-until.js';
import type { DrainEvent } from './drain-nodes.js';
import { Journal } from './journal.js';
import type { ChildConfig } from './testing-drain-batch-child.js';

// Subnet 127.0.111.x belongs to this file (the drain's real-server tests use 127.0.110–119).
const HOST = '127.0.111.1';
const REPO = resolve(import.meta.dirname, '..', '..');
const CHILD = join(REPO, 'src', 'run', 'testing-drain-batch-child.ts');
const BATCH = ['k1', 'k2'];

let lab: LabApiFixture;
let client: LabKubeClient;
let controller: LabNodesController;
let dir: string;
const evictions = new EvictionLog();
const children: ChildProcess[] = [];

beforeAll(async () => {
  lab = await startLabApi({ host: HOST, evictionLog: evictions });
  const cert = await issueClientCert(lab.ca, 'kubernetes-admin', ['system:masters']);
  client = new LabKubeClient({
    server: lab.server.url,
    ca: lab.ca.certPem,
    cert: cert.certPem,
    key: cert.keyPem,
  });
  dir = await mkdtemp(join(tmpdir(), 'ferry-kill-batch-'));
  await writeFile(join(dir, 'kubeconfig'), lab.kubeconfig, { mode: 0o600 });
  await writeFile(join(dir, 'plan.json'), '{}');
  controller = new LabNodesController({
    client,
    intervalMs: 50,
    timings: { podStartDelayMs: 100, nodeReadyDelayMs: 100, terminationDelayMs: 100, leaseRenewMs: 300 },
    // Pods on the batch's nodes take 2 s to stop: the kill lands while they terminate.
    behaviour: (n) => (BATCH.includes(n) ? { ...NORMAL, slowDrain: { graceSeconds: 2 } } : NORMAL),
    clusterCidr: '10.244.0.0/16',
  });
  await client.create('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'app' },
  });
  for (const n of [...BATCH, 'k3', 'k4'])
    await client.create('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: n, labels: { 'kubernetes.io/hostname': n } },
      spec: {},
      status: {
        allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
        capacity: { cpu: '4', memory: '8Gi', pods: '110' },
        addresses: [{ type: 'InternalIP', address: '127.0.111.50' }],
      },
    });
  controller.start();
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await controller?.stop();
  client?.close();
  await lab?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function start(resume: boolean): { child: ChildProcess; out: string[]; exit: Promise<number | null> } {
  const cfg: ChildConfig = {
    kubeconfig: join(dir, 'kubeconfig'),
    planFile: join(dir, 'plan.json'),
    journal: join(dir, 'plan.journal.sqlite'),
    decommissionLog: join(dir, 'decommissioned.txt'),
    nodes: BATCH,
    resume,
  };
  const cfgFile = join(dir, `child-${children.length}.json`);
  writeFileSync(cfgFile, JSON.stringify(cfg));
  const out: string[] = [];
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, cfgFile], { cwd: REPO });
  children.push(child);
  child.stdout!.on('data', (c: Buffer) => out.push(c.toString()));
  child.stderr!.on('data', (c: Buffer) => out.push(c.toString()));
  return { child, out, exit: once(child, 'exit').then(([code]) => code as number | null) };
}

function progress(): DrainEvent[] {
  const file = join(dir, 'plan.journal.sqlite');
  if (!existsSync(file)) return [];
  let j: Journal;
  try {
    j = Journal.open(file, { readonly: true });
  } catch {
    return []; // the child is still creating it
  }
  try {
    return j.observations({ purpose: 'drain-progress' }).map((o) => o.data as DrainEvent);
  } finally {
    j.close();
  }
}

it('SIGKILLed mid-batch, --resume completes it: no pod evicted twice, no node decommissioned holding pods', async () => {
  await client.create('/apis/apps/v1/namespaces/app/deployments', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'app' },
    spec: {
      replicas: 8,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          terminationGracePeriodSeconds: 30,
          containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '100m' } } }],
        },
      },
    },
  });
  await client.create('/apis/policy/v1/namespaces/app/poddisruptionbudgets', {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web', namespace: 'app' },
    spec: { maxUnavailable: 2, selector: { matchLabels: { app: 'web' } } },
  });
  const onBatch = await until('web Ready, with pods on both nodes of the batch', async () => {
    const ps = (await client.list<KObj>('/api/v1/namespaces/app/pods')).filter(
      (p) =>
        !p.metadata.deletionTimestamp &&
        p.status?.conditions?.some((c: KObj) => c.type === 'Ready' && c.status === 'True'),
    );
    const here = ps.filter((p) => BATCH.includes(p.spec.nodeName));
    return ps.length === 8 && BATCH.every((n) => here.some((p) => p.spec.nodeName === n)) ? here : undefined;
  });
  expect(onBatch.length).toBeGreaterThanOrEqual(2);

  // 1. Killed once the batch's drain has evicted something and not yet finished.
  const run1 = start(false);
  for (let i = 0; ; i++) {
    const p = progress();
    if (p.some((e) => e.kind === 'evicted') && !p.some((e) => e.kind === 'replacements-ready')) break;
    if (run1.child.exitCode !== null || i > 1200) throw new Error(`never mid-batch:\n${run1.out.join('')}`);
    await sleep(25);
  }
  run1.child.kill('SIGKILL');
  expect(await run1.exit).toBe(null);
  const atKill = progress();
  expect(atKill.some((e) => e.kind === 'replacements-ready')).toBe(false);
  expect(existsSync(join(dir, 'decommissioned.txt'))).toBe(false);

  // 2. Resumed to the end.
  const run2 = start(true);
  expect(await run2.exit, run2.out.join('').slice(-3000)).toBe(0);
  expect(run2.out.join('')).toContain('was in flight');

  const all = progress();
  const uids = all.flatMap((e) => (e.kind === 'evicted' ? [e.evicted.uid] : []));
  expect(new Set(uids).size).toBe(uids.length);
  // The lab's own log agrees: each pod name was evicted at most once (ReplicaSet pods get new names).
  const names = evictions
    .all()
    .filter((e) => e.outcome === 'evicted')
    .map((e) => e.pod);
  expect(new Set(names).size).toBe(names.length);
  expect(names.length).toBe(onBatch.length);
  expect(evictions.violations()).toEqual([]);
  // Each node decommissioned once, and only when it held nothing but DaemonSet and mirror pods.
  const lines = readFileSync(join(dir, 'decommissioned.txt'), 'utf8').trim().split('\n').sort();
  expect(lines).toEqual(BATCH.map((n) => `${n} 0`));

  const j = Journal.open(join(dir, 'plan.journal.sqlite'), { readonly: true });
  try {
    const drainId = [...j.lastStates().keys()].find((id) => id.includes('.drain-batch.'))!;
    expect(j.transitions(drainId).filter((t) => t.state === 'started')).toHaveLength(2);
    expect(j.lastStates().get(drainId)?.state).toBe('done');
    expect(j.runEnds().map((e) => e.state)).toEqual(['completed']);
  } finally {
    j.close();
  }
}, 180_000);
