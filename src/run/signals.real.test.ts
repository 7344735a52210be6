/**
 * The cluster's own alerts as gates, against a real Alertmanager: a matching alert firing stops the
 * run at the next gate, naming it, before anything is acted on; one that fires mid-run stops it at
 * the gate after; an Alertmanager that stops answering stops it too (not observed is not clear);
 * with a silencer, the alerts a step raises by design are silenced while it runs, journaled, and
 * the silences end with the step.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Alertmanager } from '../adapters/alertmanager/client.js';
import {
  alertmanagerMissing,
  startAlertmanager,
  type TestAlertmanager,
} from '../adapters/alertmanager/testing-alertmanager.js';
import { skipFor } from '../lab/testing-binaries.js';
import { Journal } from './journal.js';
import { beginRun, plan, World, worldOrchestrator } from './testing-orchestrator.js';

const CRITICAL = { alertname: 'KubePersistentVolumeErrors', severity: 'critical', namespace: 'shop' };

describe.skipIf(skipFor(alertmanagerMissing()))('alerts as gates (real Alertmanager)', () => {
  let am: TestAlertmanager;
  let dir: string;
  let journal: Journal;
  beforeAll(async () => {
    am = await startAlertmanager();
  }, 30_000);
  afterAll(async () => am?.stop());
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-signals-'));
    await writeFile(join(dir, 'plan.json'), '{}');
    journal = Journal.open(join(dir, 'plan.journal.sqlite'));
  });
  afterEach(async () => {
    journal.close();
    await rm(dir, { recursive: true, force: true });
    await am.resolve([CRITICAL, { alertname: 'KubeNodeNotReady', severity: 'critical', node: 'n1' }]);
  });
  const run = (
    w: World,
    p: ReturnType<typeof plan>,
    extra: Parameters<typeof worldOrchestrator>[5],
    logs: string[] = [],
  ) =>
    worldOrchestrator(
      w,
      p,
      { journal, planFile: join(dir, 'plan.json') },
      { resume: true },
      logs,
      extra,
    ).run();

  it('a critical alert stops the run before its first step acts; once resolved, the run completes', async () => {
    const client = new Alertmanager({ url: am.url });
    await am.fire([CRITICAL, { alertname: 'Watchdog', severity: 'none' }]);
    const w = new World();
    const p = plan();
    beginRun(journal, p);
    const r = await run(w, p, { signals: [client] });
    expect(r.status).toBe('stopped');
    expect(r.stoppedAt).toBe('2.01.cordon.n1');
    expect(r.error?.kind).toBe('gate');
    expect(r.error?.message).toMatch(
      /signals do not hold before 2\.01\.cordon\.n1: Alertmanager 127\.0\.0\.1:\d+ reports 1: KubePersistentVolumeErrors\{namespace="shop", severity="critical"\}/,
    );
    expect(r.error?.message).not.toMatch(/Watchdog/);
    expect(w.calls).toEqual([]);
    expect(journal.observations({ purpose: 'signal' }).length).toBeGreaterThan(0);

    await am.resolve([CRITICAL]);
    const again = await run(w, p, { signals: [client] });
    expect(again.status).toBe('completed');
    expect(w.calls.at(-1)).toBe('decommission n1');
  });

  it('an alert that fires mid-run stops it at the next gate; the steps before it are done', async () => {
    const client = new Alertmanager({ url: am.url });
    const w = new World();
    const evict = w.kube.evict.bind(w.kube);
    w.kube.evict = async (ns, name) => {
      await am.fire([CRITICAL]);
      return evict(ns, name);
    };
    const p = plan();
    beginRun(journal, p);
    const r = await run(w, p, { signals: [client] });
    expect(r.status).toBe('stopped');
    expect(r.stoppedAt).toBe('2.03.etcd-move-leader.n1');
    expect(r.steps.map((s) => s.id)).toEqual(['2.01.cordon.n1', '2.02.drain.n1']);
    expect(w.calls).not.toContain(expect.stringMatching(/^moveLeader/));
  });

  it('an Alertmanager that stops answering stops the run: what could not be read is not clear', async () => {
    const other = await startAlertmanager();
    const client = new Alertmanager({ url: other.url, timeoutMs: 500 });
    other.kill();
    await other.stop();
    const w = new World();
    const p = plan();
    beginRun(journal, p);
    const r = await run(w, p, { signals: [client] });
    expect(r.status).toBe('stopped');
    expect(r.error?.message).toMatch(/could not read Alertmanager 127\.0\.0\.1:\d+: .*did not answer/);
    expect(r.error?.remediation).toMatch(/make the signal readable again/);
    expect(w.calls).toEqual([]);
  }, 30_000);

  it('--silence-expected: the alerts a step raises are silenced while it runs, and only those', async () => {
    const client = new Alertmanager({ url: am.url });
    const w = new World();
    let during: Awaited<ReturnType<TestAlertmanager['silences']>> = [];
    const decommission = w.provisioner.decommission.bind(w.provisioner);
    w.provisioner.decommission = async (req, ctx) => {
      // The node goes: its kubelet stops reporting, and the alert fires while the step runs.
      await am.fire([{ alertname: 'KubeNodeNotReady', severity: 'critical', node: 'n1' }]);
      during = (await am.silences()).filter((s) => s.status.state === 'active');
      expect(await client.read()).toEqual({ kind: 'clear' });
      return decommission(req, ctx);
    };
    const p = plan();
    beginRun(journal, p);
    const logs: string[] = [];
    const r = await run(w, p, { signals: [client], silencer: client }, logs);
    expect(r.status, r.error?.message).toBe('completed');

    // While decommissioning n1: its two node alerts, scoped to it, silenced by ferry.
    expect(during.map((s) => s.comment).sort()).toEqual([
      'ferry: 2.05.decommission.n1: n1 is decommissioned; expires when the step ends',
      'ferry: 2.05.decommission.n1: n1 is decommissioned; expires when the step ends',
    ]);
    expect(during.flatMap((s) => s.matchers)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'alertname', value: 'KubeNodeNotReady' }),
        expect.objectContaining({ name: 'alertname', value: 'KubeNodeUnreachable' }),
        expect.objectContaining({ name: 'node', value: 'n1', isEqual: true, isRegex: false }),
      ]),
    );
    // Every silence ferry made has ended; the alert it covered fires again.
    const mine = (await am.silences()).filter((s) => s.createdBy === 'ferry' && s.comment.includes('2.0'));
    expect(mine.length).toBe(4); // leader move, member removal, two node alerts
    expect(mine.every((s) => s.status.state === 'expired')).toBe(true);
    expect((await client.read()).kind).toBe('firing');
    const made = journal
      .observations({ purpose: 'silence' })
      .map((o) => o.data as { id: string; expired?: boolean });
    expect(made.filter((d) => d.expired === undefined).length).toBe(4);
    expect(made.filter((d) => d.expired === true).length).toBe(4);
    expect(logs.join('\n')).toMatch(/silenced KubeNodeNotReady \{"node":"n1"\} on Alertmanager/);
  });
});
