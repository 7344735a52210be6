import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../audit/snapshot-index.js';
import { memoryIo } from '../cli/io.js';
import { runCli } from '../cli/run-cli.js';
import { FerryError } from '../errors.js';
import { deriveFacts } from '../facts/derive.js';
import { makespan } from '../plan/batches/estimate.js';
import { clusterModel } from '../plan/batches/from-snapshot.js';
import { planWorkerBatches } from '../plan/batches/planner.js';
import { timingFor } from '../plan/batches/timing.js';
import { loadSnapshot } from '../snapshot/load.js';
import type { Snapshot } from '../snapshot/model.js';
import { cpuMillis } from '../util/quantity.js';
import { POOL_LABEL, poolSizes, type WorkerLab, writeWorkerLab } from './testing-worker-lab.js';

const EXAMPLE = resolve('examples/lab-cluster');

describe('the generated worker lab (bench/workers --generate)', () => {
  let dir: string;
  let out: string;
  let lab: WorkerLab;
  let snap: Snapshot;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-worker-lab-'));
    out = join(dir, 'lab-60');
    lab = await writeWorkerLab(EXAMPLE, out, 60);
    snap = await loadSnapshot(out, { strictPki: false });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("has the issue's size: 3 control planes, 60 workers in four pools, 400+ pods under mixed PDBs", () => {
    const workers = snap.resources.nodes.filter((n) => n.metadata.name.startsWith('worker-'));
    const cps = snap.resources.nodes.filter((n) => n.metadata.name.startsWith('cp-'));
    expect(cps).toHaveLength(3);
    expect(workers).toHaveLength(60);
    expect(new Set(workers.map((w) => w.metadata.labels?.[POOL_LABEL]))).toEqual(
      new Set(['general', 'data', 'batch', 'edge']),
    );
    expect(lab.workloadPods).toBeGreaterThanOrEqual(400);
    const system = snap.resources.pods.filter((p) => p.metadata.namespace !== 'kube-system');
    expect(system).toHaveLength(lab.workloadPods);
    const rules = snap.resources.poddisruptionbudgets.map((b) => JSON.stringify(b.spec));
    expect(rules.some((r) => r.includes('"maxUnavailable":1'))).toBe(true);
    expect(rules.some((r) => /"minAvailable":\d+/.test(r))).toBe(true);
    expect(rules.some((r) => /"(maxUnavailable|minAvailable)":"\d+%"/.test(r))).toBe(true);
    // Some workloads go without a PDB.
    expect(snap.resources.poddisruptionbudgets.length).toBeLessThan(snap.resources.deployments.length);
    // Every generated pod has a node selector on its pool and sits in that pool.
    const poolOf = new Map(workers.map((w) => [w.metadata.name, w.metadata.labels?.[POOL_LABEL]]));
    for (const p of system) expect(p.spec.nodeSelector[POOL_LABEL]).toBe(poolOf.get(p.spec.nodeName));
  });

  it('places no more requests on a worker than it has, and fills the batch pool near its capacity', () => {
    const cpu = new Map<string, number>();
    for (const p of snap.resources.pods)
      for (const c of p.spec?.containers ?? [])
        cpu.set(
          p.spec.nodeName,
          (cpu.get(p.spec.nodeName) ?? 0) + (cpuMillis(c.resources?.requests?.cpu) ?? 0),
        );
    for (const [node, m] of cpu) if (node.startsWith('worker-')) expect(m, node).toBeLessThanOrEqual(7500);
    for (const n of lab.pools.batch) expect(cpu.get(n)! / 7500, n).toBeGreaterThan(0.75);
  });

  it('plans like a real cluster: the StatefulSet on local volumes is reported unmovable, the batch pool bounds batches by capacity', () => {
    const facts = deriveFacts(snap, {});
    const workers = facts.nodes.workers.value ?? [];
    expect(workers).toHaveLength(60);
    const model = clusterModel(snap, buildIndex(snap), workers);
    const timing = timingFor('manual');
    const roll = planWorkerBatches(model, {
      strategy: 'replace',
      maxUnavailable: 15,
      surgeNodes: 0,
      surgeReplicas: true,
      timing,
    });
    const local = roll.outages.filter((o) => o.reason === 'local-volume');
    expect(local.map((o) => o.node).sort()).toEqual(lab.pools.data.slice(0, 3).sort());
    expect(local.every((o) => o.kind === 'StatefulSet' && o.name === 'store')).toBe(true);
    // Nothing else is an outage: every other pod has room in its pool.
    expect(roll.outages.filter((o) => o.reason !== 'local-volume' && o.reason !== 'single-replica')).toEqual(
      [],
    );
    expect(roll.blocked).toEqual([]);
    // Two batch-pool workers never drain together: their pods would not fit on the rest.
    for (const b of roll.batches)
      expect(
        b.nodes.filter((n) => lab.pools.batch.includes(n)).length,
        `batch ${b.index}`,
      ).toBeLessThanOrEqual(1);
    expect(roll.batches.some((b) => b.bound.kind === 'capacity')).toBe(true);
    const m = makespan(roll, { timing, strategy: 'replace', maxUnavailable: 15, workers: 60 });
    expect(m.lowerBoundSeconds).toBeGreaterThan(0);
  });

  it('loads in `ferry audit` (findings, not an input error)', async () => {
    const io = memoryIo({ cwd: dir });
    const code = await runCli(['audit', out, '-o', 'json', '--fail-on', 'never'], io);
    expect(io.err).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(io.out).findings.length).toBeGreaterThan(0);
  });

  it('is written whole, mode 0600 resources, and does not replace a directory unless forced', async () => {
    const files = await readdir(join(out, 'resources'));
    expect(files).toContain('pods.json');
    expect(files).not.toContain('pods.yaml');
    expect((await stat(join(out, 'resources', 'pods.json'))).mode & 0o777).toBe(0o600);
    await expect(writeWorkerLab(EXAMPLE, out, 12)).rejects.toThrow();
    await writeWorkerLab(EXAMPLE, out, 12, { force: true });
    const again = await loadSnapshot(out, { strictPki: false });
    expect(again.resources.nodes.filter((n) => n.metadata.name.startsWith('worker-'))).toHaveLength(12);
    expect((await readdir(dir)).filter((f) => f.includes('ferry-tmp'))).toEqual([]);
  });

  it('refuses a size whose pools could not take one drained node', () => {
    expect(() => poolSizes(8)).toThrow(FerryError);
    expect(() => poolSizes(8)).toThrow(/at least 9 workers/);
    expect(poolSizes(12)).toEqual({ general: 5, data: 3, batch: 2, edge: 2 });
    const s = poolSizes(60);
    expect(s.general + s.data + s.batch + s.edge).toBe(60);
  });
});
