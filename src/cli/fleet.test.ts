import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../adapters/kube/testing-fake-api.js';
import { type FakeCluster, startFakeCluster } from '../adapters/kube/testing-fake-cluster.js';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

const EXAMPLE = resolve('examples/lab-cluster');

let dir: string;
let live: FakeCluster;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-fleet-cli-'));
  live = await startFakeCluster();
  const port = await closedPort();
  await writeFile(
    join(dir, 'gone.conf'),
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`,
  );
  await writeFile(
    join(dir, 'fleet.yaml'),
    [
      'apiVersion: ferry.dev/v1alpha1',
      'kind: Fleet',
      'clusters:',
      `  - {name: lab-b, snapshot: ${EXAMPLE}, labels: {wave: "2"}}`,
      `  - {name: lab-a, snapshot: ${EXAMPLE}, labels: {wave: "1"}}`,
      `  - {name: recorded, kubeconfig: ${live.kubeconfig}, labels: {wave: "1"}}`,
      '  - {name: gone, kubeconfig: gone.conf, labels: {wave: "3"}}',
      '  - {name: missing, snapshot: no-such-dir}',
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  await live?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const run = async (...argv: string[]) => {
  const io = memoryIo({ cwd: dir });
  const code = await runCli(['fleet', ...argv], io);
  return { code, out: io.out, err: io.err };
};

describe('ferry fleet audit', () => {
  it('audits snapshots and live clusters side by side; one that cannot be read never stops the others', async () => {
    const { code, out, err } = await run('audit', 'fleet.yaml', '--concurrency', '2', '-o', 'json');
    expect(code).toBe(1);
    const r = JSON.parse(out);
    expect(r.clusters.map((c: { name: string; verdict: string }) => [c.name, c.verdict])).toEqual([
      ['lab-a', 'blocked'],
      ['recorded', expect.stringMatching(/^(blocked|ready)$/)],
      ['lab-b', 'blocked'],
      ['gone', 'unreachable'],
      ['missing', 'unreadable'],
    ]);
    const gone = r.clusters.find((c: { name: string }) => c.name === 'gone');
    expect(gone.reason).toContain('127.0.0.1:');
    // Each cluster's report holds what the single-cluster audit finds, and the fleet carries them all.
    const io = memoryIo({ cwd: dir });
    expect(await runCli(['audit', EXAMPLE, '-o', 'json', '--fail-on', 'never'], io)).toBe(0);
    const single = JSON.parse(io.out);
    const own = JSON.parse(await readFile(join(dir, 'fleet-audit/clusters/lab-a/report.json'), 'utf8'));
    expect(own.counts).toEqual(single.counts);
    const fps = (xs: { fingerprint: string }[]) => xs.map((f) => f.fingerprint).sort();
    expect(fps(own.findings)).toEqual(fps(single.findings));
    for (const name of ['lab-a', 'lab-b'])
      expect(fps(r.findings.filter((f: { cluster: string }) => f.cluster === name))).toEqual(
        fps(single.findings),
      );
    // The live cluster's snapshot is kept beside its report, and audits again offline.
    await stat(join(dir, 'fleet-audit/clusters/recorded/snapshot'));
    expect(
      await runCli(
        ['audit', 'fleet-audit/clusters/recorded/snapshot', '--fail-on', 'never'],
        memoryIo({ cwd: dir }),
      ),
    ).toBe(0);
    expect(err).toContain('auditing 5 cluster(s) of fleet.yaml, 2 at a time');
    expect(err).toMatch(/gone: unreachable: /);
    // A rule that hits both example clusters is one group naming both.
    const group = r.rules.find((g: { clusters: { name: string }[] }) => g.clusters.length >= 2);
    expect(group.clusters.map((c: { name: string }) => c.name)).toEqual(
      expect.arrayContaining(['lab-a', 'lab-b']),
    );
  });

  it('compares with the previous fleet.json: nothing new, nothing fixed, and says which it could not compare', async () => {
    await run('audit', 'fleet.yaml', '--out', 'first', '-o', 'json');
    const { out } = await run('audit', 'fleet.yaml', '--out', 'second', '--baseline', 'first/fleet.json');
    expect(out).toContain('Since first/fleet.json: 0 new, 0 fixed.');
    expect(out).toContain('not compared (read in only one run): gone, missing');
  });

  it('-o sarif: a run per cluster, in the fleet file order', async () => {
    const { code, out } = await run('audit', 'fleet.yaml', '--out', 'sarif-out', '-o', 'sarif');
    expect(code).toBe(1);
    const log = JSON.parse(out);
    expect(log.runs.map((r: { automationDetails: { id: string } }) => r.automationDetails.id)).toEqual(
      ['lab-b', 'lab-a', 'recorded', 'gone', 'missing'].map((n) => `ferry-fleet/${n}`),
    );
    expect(log.runs[3].invocations[0].executionSuccessful).toBe(false);
  });

  it('fleet plan: refuses what ferry plan refuses, and plans the rest in waves with plans ferry run reads', async () => {
    const refused = await run('plan', 'fleet.yaml', '--out', 'plans-refused', '-o', 'json');
    expect(refused.code).toBe(1);
    const r = JSON.parse(refused.out);
    const lab = r.clusters.find((c: { name: string }) => c.name === 'lab-a');
    expect(lab.outcome.kind).toBe('refused');
    expect(lab.outcome.why[0]).toMatch(/unsuppressed blocker\(s\).*--allow-blockers/);
    expect(r.clusters.find((c: { name: string }) => c.name === 'gone').outcome.kind).toBe('unreachable');

    const ok = await run(
      'plan',
      'fleet.yaml',
      '--out',
      'plans',
      '-o',
      'json',
      '--allow-blockers',
      '--surge-replicas',
      '--max-parallel',
      '1',
    );
    const p = JSON.parse(ok.out);
    const wave1 = p.waves.find((w: { name: string }) => w.name === '1');
    // At most one at a time: lab-a and (when its recorded cluster plans) recorded, one round each.
    expect(wave1.rounds.flat()).toContain('lab-a');
    for (const round of wave1.rounds) expect(round).toHaveLength(1);
    expect(p.waves.find((w: { name: string }) => w.name === '2').rounds).toEqual([['lab-b']]);
    const { parsePlan } = await import('../plan/load.js');
    const planFile = join(dir, 'plans/clusters/lab-a/plan.json');
    const plan = parsePlan(await readFile(planFile, 'utf8'), planFile);
    expect(plan.workerRoll.batches.length).toBeGreaterThan(0);
    await stat(join(dir, 'plans/fleet-plan.json'));

    // A run of lab-a that stopped at a gate, journaled as ferry run journals it; lab-b never ran.
    const { Journal, journalPathFor } = await import('../run/journal.js');
    const j = Journal.open(journalPathFor(planFile));
    const steps = plan.phases.flatMap((ph) => ph.steps);
    j.beginRun({
      planFile,
      planDigest: 'd',
      steps: steps.map((st, i) => ({
        id: st.id,
        position: i,
        kind: st.kind,
        subject: String(st.subject),
        destructive: st.destructive,
        title: st.title,
      })),
    });
    j.transition(steps[0]!.id, 1, 'done');
    // What the run's probes measured, journaled as a run journals them when it ends.
    const summary = (name: string, failures: number) => ({
      name,
      description: name,
      attempts: 240,
      failures,
      longestFailureWindowMs: failures * 500,
      longestGapMs: 610,
      longestGapAtMs: 1_000,
      errors: [],
    });
    for (const [name, failures] of [
      ['api', 0],
      ['etcd-write', 3],
    ] as const)
      j.observe(null, 'probe', failures === 0, {
        summary: summary(name, failures),
        samples: [],
        startedAt: '2026-12-04T10:00:00.000Z',
      });
    j.endRun('stopped', { message: 'gate: etcd has 2 voters, expected 3', remediation: 'look at etcd' });
    j.close();
    const st = await run('status', 'fleet.yaml', '--plans', 'plans');
    expect(st.code).toBe(1);
    const line = (name: string) => st.out.split('\n').find((l) => l.startsWith(`${name} `)) ?? '';
    expect(line('lab-a')).toContain(`stopped `);
    expect(line('lab-a')).toContain(
      `at ${steps[1]!.id} ${steps[1]!.title} (1/${steps.length} steps): gate: etcd has 2 voters, expected 3; look at etcd`,
    );
    expect(line('lab-b')).toContain(`planned, not started (`);
    expect(line('gone')).toContain('no plan at plans/clusters/gone/plan.json');
    // Under each: its versions from its Nodes (the snapshot's, the live cluster's) and its origin.
    const lines = st.out.split('\n');
    const under = (name: string) => lines[lines.findIndex((l) => l.startsWith(`${name} `)) + 1]?.trim();
    expect(under('lab-a')).toBe('kubernetes v1.32.4; no Talos node (8 nodes); listed in the fleet file');
    expect(under('recorded')).toBe('kubernetes v1.32.4; no Talos node (3 nodes); listed in the fleet file');
    expect(under('gone')).toMatch(/^versions not observed: .*; listed in the fleet file$/);
    expect(under('missing')).toMatch(/^versions not observed: /);
    expect(st.out).not.toContain('MANAGEMENT');
    // A third line where a run recorded its probes; none for the clusters that never ran.
    expect(lines[lines.findIndex((l) => l.startsWith('lab-a ')) + 2]?.trim()).toBe(
      'probes of the run started 2026-12-04T10:00:00.000Z: api 0/240 failed, longest outage 0 ms, longest gap 610 ms · etcd-write 3/240 failed, longest outage 1500 ms, longest gap 610 ms',
    );
    expect(lines[lines.findIndex((l) => l.startsWith('lab-b ')) + 2]).not.toMatch(/probes/);
    const js = JSON.parse((await run('status', 'fleet.yaml', '--plans', 'plans', '-o', 'json')).out);
    expect(js.clusters.find((c: { name: string }) => c.name === 'lab-a').lastProbes.probes[1]).toEqual({
      name: 'etcd-write',
      attempts: 240,
      failures: 3,
      longestFailureWindowMs: 1500,
      longestGapMs: 610,
    });
    // The page: the stopped run first, under what needs attention; the same exit code.
    const page = await run('status', 'fleet.yaml', '--plans', 'plans', '-o', 'html');
    expect(page.code).toBe(1);
    const attention = /<div class="attention-box" id="attention">(.*?)<\/div>/s.exec(page.out)?.[1] ?? '';
    expect(attention).toContain('<a href="#c-lab-a">lab-a</a>: stopped ');
    expect(attention).not.toContain('lab-b');
    expect(page.out).toContain('<li class="probe bad">etcd-write 3/240 failed');
  });

  it('refuses a bad fleet file before reading any cluster (exit 2, file, line, field)', async () => {
    await writeFile(
      join(dir, 'bad.yaml'),
      'apiVersion: ferry.dev/v1alpha1\nkind: Fleet\nclusters:\n  - name: a\n',
    );
    const { code, err } = await run('audit', 'bad.yaml', '--out', 'bad-out');
    expect(code).toBe(2);
    expect(err).toContain('bad.yaml');
    expect(err).toContain('needs exactly one of snapshot and kubeconfig');
    await expect(stat(join(dir, 'bad-out'))).rejects.toThrow();
  });

  it('refuses a baseline that is not a fleet report', async () => {
    await writeFile(join(dir, 'not-fleet.json'), '{"findings": []}');
    const { code, err } = await run('audit', 'fleet.yaml', '--baseline', 'not-fleet.json');
    expect(code).toBe(2);
    expect(err).toContain('not a ferry fleet report');
  });
});
