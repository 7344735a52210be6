import { describe, expect, it } from 'vitest';
import type { Probe, ProbeSummary } from '../ports/run.js';
import { probeBudget } from './probe-budget.js';

/** A probe whose figures the test sets, as the loop would have counted them. */
function probe() {
  const s: ProbeSummary = {
    name: 'shop',
    description: 'GET / on shop',
    attempts: 0,
    failures: 0,
    longestFailureWindowMs: 0,
    longestGapMs: 0,
    longestGapAtMs: 0,
    errors: [],
  };
  const p: Probe = {
    name: 'shop',
    start: () => {},
    stop: async () => s,
    summary: () => ({ ...s, errors: s.errors.map((e) => ({ ...e })) }),
    samples: () => [],
  };
  return { s, p };
}

describe('probeBudget', () => {
  it('counts only the requests since the last gate, against the budget', async () => {
    const { s, p } = probe();
    let t = 0;
    const sig = probeBudget(p, { maxFailRatio: 0.01, quietMs: 5000, now: () => t });
    expect(sig.name).toBe('probe shop');
    Object.assign(s, {
      attempts: 1000,
      failures: 10,
      errors: [{ message: 'HTTP 503 from shop', count: 10 }],
    });
    t = 1000;
    expect(await sig.read()).toEqual({ kind: 'clear' }); // 1 %: at the budget
    Object.assign(s, {
      attempts: 1100,
      failures: 12,
      errors: [{ message: 'HTTP 503 from shop', count: 12 }],
    });
    t = 2000;
    expect(await sig.read()).toEqual({
      kind: 'firing',
      items: [
        '2 of 100 requests failed since the last gate (2 %, more than the 1 % allowed): HTTP 503 from shop ×2',
      ],
    });
    // The failures before are not counted again.
    Object.assign(s, { attempts: 1200, failures: 12 });
    t = 3000;
    expect(await sig.read()).toEqual({ kind: 'clear' });
  });

  it('a budget of 0 stops on one failure; each kind of failure is named with its count', async () => {
    const { s, p } = probe();
    const sig = probeBudget(p, { maxFailRatio: 0, quietMs: 5000, now: () => 0 });
    Object.assign(s, {
      attempts: 500,
      failures: 2,
      errors: [
        { message: 'ECONNREFUSED', count: 1 },
        { message: 'no answer within 1000 ms', count: 1 },
      ],
    });
    const r = await sig.read();
    expect(r.kind === 'firing' && r.items[0]).toBe(
      '2 of 500 requests failed since the last gate (0.4 %, more than the 0 % allowed): ECONNREFUSED ×1, no answer within 1000 ms ×1',
    );
  });

  it('no request since the last gate: clear while within its deadline, unobserved after', async () => {
    const { s, p } = probe();
    let t = 0;
    const sig = probeBudget(p, { maxFailRatio: 0, quietMs: 2000, now: () => t });
    Object.assign(s, { attempts: 10 });
    t = 100;
    expect(await sig.read()).toEqual({ kind: 'clear' });
    t = 1500;
    expect(await sig.read()).toEqual({ kind: 'clear' });
    t = 2200;
    expect(await sig.read()).toEqual({
      kind: 'unobserved',
      reason: 'it finished no request in the last 2 s',
    });
    Object.assign(s, { attempts: 11 });
    expect(await sig.read()).toEqual({ kind: 'clear' });
  });
});

describe('an operator probe as a gate, on a run', () => {
  it('an endpoint that starts failing mid-run stops the run at the next gate, naming the failures', async () => {
    const { createServer } = await import('node:http');
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { requestProbe } = await import('../adapters/probes/http.js');
    const { Journal } = await import('./journal.js');
    const { beginRun, plan, World, worldOrchestrator } = await import('./testing-orchestrator.js');
    let status = 200;
    const server = createServer((_req, res) => {
      res.statusCode = status;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const dir = await mkdtemp(join(tmpdir(), 'ferry-probe-gate-'));
    await writeFile(join(dir, 'plan.json'), '{}');
    const journal = Journal.open(join(dir, 'plan.journal.sqlite'));
    const probe = requestProbe({
      url: `http://127.0.0.1:${port}/healthz`,
      name: 'shop/healthz',
      intervalMs: 5,
    });
    probe.start();
    try {
      const w = new World();
      const evict = w.kube.evict.bind(w.kube);
      w.kube.evict = async (ns, name) => {
        // The drain takes the app down: its endpoint answers 503 until the run notices.
        status = 503;
        await new Promise((r) => setTimeout(r, 100));
        return evict(ns, name);
      };
      const p = plan();
      beginRun(journal, p);
      const signal = probeBudget(probe, { maxFailRatio: 0.001, quietMs: 5000 });
      const r = await worldOrchestrator(w, p, { journal, planFile: join(dir, 'plan.json') }, {}, [], {
        signals: [signal],
      }).run();
      expect(r.status).toBe('stopped');
      expect(r.stoppedAt).toBe('2.03.etcd-move-leader.n1');
      expect(r.error?.message).toMatch(
        /probe shop\/healthz reports 1: \d+ of \d+ requests failed since the last gate \([\d.]+ %, more than the 0\.1 % allowed\): HTTP 503 from \S+ ×\d+/,
      );
      expect(w.calls.some((c) => c.startsWith('moveLeader'))).toBe(false);
    } finally {
      await probe.stop();
      journal.close();
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
