/**
 * Phase 3 of the example cluster's plan: computed batches, the order of a batch's steps, the
 * outages and blocking budget it reports, --surge-replicas and --surge, and the rules the loader
 * holds a plan's worker phase to.
 */
import { describe, expect, it } from 'vitest';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import { buildPlan, type PlanOptions } from './build.js';
import { drainBatchStep } from './drain-batch-step.js';
import { parsePlan } from './load.js';
import type { Plan, Step, Strategy } from './model.js';
import { renderPlanJson } from './render-json.js';
import { inputsFor, sealed, stepsOfPhase } from './testing-example.js';

async function planWith(options: PlanOptions = {}, strategy: Strategy = 'surge'): Promise<Plan> {
  return buildPlan({ ...inputsFor(await exampleSnapshot(), { strategy }), options });
}

const kindsOf = (steps: Step[]) => steps.map((s) => `${s.kind} ${s.subject}`);

function refusal(plan: Plan): string {
  try {
    parsePlan(renderPlanJson(sealed(plan)), 'plan.json');
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('the plan loaded');
}

describe('the example cluster: worker batches', () => {
  it('every worker is in exactly one batch, the batches of the plan are those of workerRoll', async () => {
    const plan = await planWith({ surgeReplicas: true, maxUnavailable: { kind: 'count', nodes: 3 } });
    const inRoll = plan.workerRoll.batches.flatMap((b) => b.nodes.map((n) => `${b.index} ${n}`));
    expect(plan.workers.map((w) => `${w.batch} ${w.node}`).sort()).toEqual(inRoll.sort());
    expect(plan.workers.map((w) => w.node).sort()).toEqual([
      'worker-1',
      'worker-2',
      'worker-3',
      'worker-4',
      'worker-5',
    ]);
    expect(plan.workerRoll.batches.every((b) => b.nodes.length <= 3)).toBe(true);
    // checkout runs on worker-1 and worker-4 and allows one disruption once scaled: never together.
    expect(
      plan.workerRoll.batches.some((b) => b.nodes.includes('worker-1') && b.nodes.includes('worker-4')),
    ).toBe(false);
    for (const b of plan.workerRoll.batches) expect(b.why).toMatch(/bounded by /);
  });

  it('--max-unavailable 40% of 5 workers: batches of at most 2, and the plan says so', async () => {
    const plan = await planWith({ surgeReplicas: true, maxUnavailable: { kind: 'percent', percent: 40 } });
    expect(plan.workerRoll.maxUnavailable).toEqual({ given: '40%', nodes: 2 });
    expect(Math.max(...plan.workerRoll.batches.map((b) => b.nodes.length))).toBe(2);
    // The default: 25% of 5 workers, rounded down, is one at a time.
    const dflt = await planWith({ surgeReplicas: true });
    expect(dflt.workerRoll.maxUnavailable).toEqual({ given: '25%', nodes: 1 });
    expect(dflt.workerRoll.batches.map((b) => b.nodes.length)).toEqual([1, 1, 1, 1, 1]);
    expect(dflt.workerRoll.batches[0]!.bound).toEqual({ kind: 'max-unavailable', max: 1 });
  });

  it('without --surge-replicas, shop/checkout blocks: worker-1 drains alone, and the roll names the budget and the fix', async () => {
    const plan = await planWith();
    expect(plan.workerRoll.blocked).toEqual([
      expect.objectContaining({
        pdb: 'shop/checkout',
        rule: 'minAvailable 2',
        nodes: ['worker-1', 'worker-4'],
        surgeable: 'Deployment shop/checkout',
      }),
    ]);
    expect(plan.workerRoll.batches[0]).toMatchObject({
      nodes: ['worker-1'],
      bound: { kind: 'blocked', pdb: 'shop/checkout' },
    });
    expect(plan.warnings.join('\n')).toContain(
      'PodDisruptionBudget shop/checkout (minAvailable 2) allows no disruption',
    );
  });

  it('lists the bare pod netshoot as the outage it is', async () => {
    const plan = await planWith({ surgeReplicas: true });
    expect(plan.workerRoll.outages).toEqual([
      expect.objectContaining({
        kind: 'Pod',
        namespace: 'default',
        name: 'netshoot',
        reason: 'bare-pod',
        node: 'worker-2',
        seconds: null,
      }),
    ]);
  });

  it('prints its estimate next to a lower bound that is not above it', async () => {
    for (const strategy of ['surge', 'replace'] as const) {
      const plan = await planWith({ surgeReplicas: true }, strategy);
      const e = plan.workerRoll.estimate;
      expect(e.lowerBoundSeconds).toBeGreaterThan(0);
      expect(e.lowerBoundSeconds).toBeLessThanOrEqual(e.seconds);
      expect(e.seconds).toBe(plan.workerRoll.batches.reduce((n, b) => n + b.seconds, 0));
      // postgres: 3 pods, 1 disruption at a time.
      expect(e.lowerBound.find((t) => t.kind === 'pdb' && t.pdb === 'shop/postgres')).toMatchObject({
        rounds: 3,
      });
    }
  });
});

describe('the steps of a batch', () => {
  it('one drain-batch step per batch: every node of the batch, with its budgets and pods, and a kubectl drain per node', async () => {
    const plan = await planWith({ surgeReplicas: true, maxUnavailable: { kind: 'count', nodes: 3 } });
    for (const b of plan.workerRoll.batches) {
      const drains = stepsOfPhase(plan, 3).filter((s) => s.batch === b.index && s.kind === 'drain-batch');
      expect(drains, `batch ${b.index}`).toHaveLength(1);
      const d = drains[0]!;
      if (d.kind !== 'drain-batch') throw new Error('not a drain-batch');
      expect(d.params.nodes.map((n) => (n.node.kind === 'kubeadm' ? n.node.name : ''))).toEqual(b.nodes);
      expect(d.params.evictionOnly).toBe(true);
      expect(d.action.commands.map((c) => c.run.split(' ')[2])).toEqual(b.nodes);
      // The runbook's command refuses bare pods, as the run does: no --force.
      for (const c of d.action.commands) {
        expect(c.run).not.toContain('--force');
        expect(c.note).toContain('--evict-bare-pods');
      }
      expect(d.verify.expect.nodes?.every((n) => n.drained && n.cordoned)).toBe(true);
    }
    expect(stepsOfPhase(plan, 3).some((s) => s.kind === 'drain')).toBe(false);
  });

  it("a batch drain's timeout is the per-node timeout once per round of 4 nodes (⌈nodes ÷ 4⌉), and the step says so", async () => {
    const step = (n: number) =>
      drainBatchStep({
        batch: 1,
        nodes: Array.from({ length: n }, (_, i) => ({
          node: { kind: 'kubeadm' as const, name: `w${i}`, address: `10.0.0.${i}` },
          info: { pdbs: [], pods: 1 },
        })),
        perNodeTimeoutSeconds: 900,
      });
    expect([1, 4, 5, 8, 9].map((n) => step(n).timeoutSeconds)).toEqual([900, 900, 1800, 1800, 2700]);
    const nine = step(9);
    expect((nine.notes ?? []).join('\n')).toContain('timeout 2700 s: 900 s per node × 3 round(s)');
    // kubectl drain's own --timeout is per node: each runbook command keeps the per-node figure.
    for (const c of nine.action.commands) expect(c.run).toContain('--timeout=900s');
    // Through the plan: every batch's drain is bounded by its own rounds.
    const plan = await planWith({ surgeReplicas: true, drainTimeoutSeconds: 600 });
    for (const d of stepsOfPhase(plan, 3))
      if (d.kind === 'drain-batch') expect(d.timeoutSeconds).toBe(600 * Math.ceil(d.params.nodes.length / 4));
  });

  it('surge: gate, every replacement asked for in one step and each bound before any is waited for, then every node cordoned before any is drained, then decommissioned and deleted', async () => {
    const plan = await planWith({ surgeReplicas: true, maxUnavailable: { kind: 'count', nodes: 3 } });
    const b = plan.workerRoll.batches.find((x) => x.nodes.length > 1)!;
    const steps = stepsOfPhase(plan, 3).filter(
      (s) => s.batch === b.index && s.kind !== 'scale-workload' && s.kind !== 'wait-workload-ready',
    );
    const nodes = b.nodes;
    const n1 = nodes[0]!;
    const each = (kind: string) => nodes.map((n) => `${kind} ${n}`);
    expect(kindsOf(steps)).toEqual([
      `gate ${n1}`,
      `provision-request ${n1}`,
      ...each('provision-detect'),
      ...each('wait-node-ready'),
      ...each('cordon'),
      `drain-batch ${n1}`,
      ...each('decommission'),
      ...each('delete-node'),
    ]);
    // The batch's gate: no workload below its budget before its drains start.
    expect(steps[0]!.expect.budgets).toEqual({ healthy: true });
    const request = steps.find((s) => s.kind === 'provision-request')!;
    if (request.kind !== 'provision-request') throw new Error('no request');
    expect(request.params.machines.map((m) => m.node.replaces)).toEqual(nodes);
    expect(request.expect.nodes?.map((n) => n.exists)).toEqual(nodes.map(() => false));
    // Each detection binds its own machine: the same parameters as the machine in the request.
    const detects = steps.filter((s) => s.kind === 'provision-detect');
    expect(detects.map((d) => d.params)).toEqual(request.params.machines);
    expect(detects.every((d) => d.verify.expect.machines?.[0]?.state === 'provisioned')).toBe(true);
  });

  it('replace: the old machines go first, their replacements come back at the same addresses', async () => {
    const plan = await planWith(
      { surgeReplicas: true, maxUnavailable: { kind: 'count', nodes: 3 } },
      'replace',
    );
    const b = plan.workerRoll.batches.find((x) => x.nodes.length > 1)!;
    const steps = stepsOfPhase(plan, 3).filter((s) => s.batch === b.index);
    const kinds = steps.map((s) => s.kind);
    expect(kinds.lastIndexOf('delete-node')).toBeLessThan(kinds.indexOf('provision-request'));
    const request = steps.find((s) => s.kind === 'provision-request')!;
    if (request.kind !== 'provision-request') throw new Error('no request');
    expect(request.expect.machines).toEqual(
      request.params.machines.map((m) => ({
        node: { kind: 'kubeadm', name: m.node.replaces, address: m.node.address },
        state: 'decommissioned',
      })),
    );
  });

  it('--surge-replicas: scale up and wait for Ready before the first checkout node drains, restore after the last', async () => {
    const plan = await planWith({ surgeReplicas: true });
    const steps = stepsOfPhase(plan, 3);
    const at = (pred: (s: Step) => boolean) => steps.findIndex(pred);
    const up = at((s) => s.kind === 'scale-workload' && s.params.purpose === 'surge');
    const wait = at((s) => s.kind === 'wait-workload-ready');
    const restore = at((s) => s.kind === 'scale-workload' && s.params.purpose === 'restore');
    const drains = steps.flatMap((s, i) =>
      s.kind === 'drain-batch' && s.params.nodes.some((n) => n.pdbs.some((p) => p.name === 'checkout'))
        ? [i]
        : [],
    );
    expect(drains.length).toBeGreaterThanOrEqual(1);
    expect(up).toBeGreaterThan(0);
    expect(wait).toBe(up + 1);
    expect(wait).toBeLessThan(Math.min(...drains));
    expect(restore).toBeGreaterThan(Math.max(...drains));
    const u = steps[up]!;
    const r = steps[restore]!;
    if (u.kind !== 'scale-workload' || r.kind !== 'scale-workload') throw new Error('not scale steps');
    expect(u.params).toEqual({
      workload: { kind: 'Deployment', namespace: 'shop', name: 'checkout' },
      replicas: 3,
      from: 2,
      purpose: 'surge',
      pdb: 'shop/checkout',
    });
    expect(u.expect.objects?.[0]?.fields).toEqual({ 'spec.replicas': '2' });
    expect(r.params.replicas).toBe(2);
    expect(u.action.commands[0]?.run).toBe('kubectl scale deployment/checkout -n shop --replicas=3');
    const w = steps[wait]!;
    expect(w.verify.expect.objects?.[0]?.fields).toEqual({
      'spec.replicas': '3',
      'status.readyReplicas': '3',
    });
    for (const i of drains)
      expect(steps[i]!.notes?.join(' ')).toContain('scaled up by one before this batch');
  });

  it('--surge N: N more Talos workers come up in batch 1, before anything is cordoned', async () => {
    const plan = await planWith({ surgeReplicas: true, surgeWorkers: 2 });
    const batch1 = stepsOfPhase(plan, 3).filter((s) => s.batch === 1);
    const surge = batch1.filter(
      (s) => s.kind === 'provision-detect' && s.params.node.replaces.startsWith('surge-'),
    );
    expect(surge).toHaveLength(2);
    const firstCordon = batch1.findIndex((s) => s.kind === 'cordon');
    for (const s of surge) expect(batch1.indexOf(s)).toBeLessThan(firstCordon);
    expect(plan.workerRoll.surgeWorkers?.note).toContain('largest pool');
    expect(plan.workerRoll.estimate.surgeSeconds).toBeGreaterThan(0);
  });

  it('the last kubeadm control plane still goes after the workers', async () => {
    const plan = await planWith({ surgeReplicas: true });
    expect(plan.phases.map((p) => p.name)).toEqual([
      'preflight',
      'preparation',
      'control-planes',
      'workers',
      'last-control-plane',
      'after-care',
    ]);
    const last = plan.controlPlanes.at(-1)!;
    expect(last.phase).toBe(4);
    expect(new Set(stepsOfPhase(plan, 4).map((s) => s.subject))).toEqual(new Set([last.node]));
    expect(stepsOfPhase(plan, 3).length).toBeGreaterThan(0);
    const workers = new Set(plan.workers.map((w) => w.node));
    for (const p of [2, 4]) expect(stepsOfPhase(plan, p).some((s) => workers.has(s.subject))).toBe(false);
  });
});

describe('what the loader refuses in a worker phase', () => {
  it('a restore before the scale-up, or none at all', async () => {
    const plan = await planWith({ surgeReplicas: true });
    const steps = plan.phases[3]!.steps;
    const restore = steps.findIndex((s) => s.kind === 'scale-workload' && s.params.purpose === 'restore');
    const dropped = structuredClone(plan);
    dropped.phases[3]!.steps.splice(restore, 1);
    dropped.phases[3]!.steps.forEach((s, i) => {
      s.index = i + 1;
      s.id = `3.${String(i + 1).padStart(2, '0')}.${s.kind}.${s.subject}`;
    });
    expect(refusal(dropped)).toContain('Deployment shop/checkout is scaled up once and restored once');
    const wrong = structuredClone(plan);
    const r = wrong.phases[3]!.steps[restore]!;
    if (r.kind === 'scale-workload') r.params.replicas = 3;
    expect(refusal(wrong)).toContain('is restored to the 2 replicas it had; got 3');
  });

  it('batches that are not the ones workerRoll planned', async () => {
    const plan = await planWith({ surgeReplicas: true });
    const moved = structuredClone(plan);
    moved.workerRoll.batches[0]!.nodes = ['worker-5'];
    expect(refusal(moved)).toContain('workerRoll.batches[0].nodes: batch 1 was planned for worker-5');
  });
});
