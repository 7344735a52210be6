/**
 * `ferry run` with the cluster's own signals, as an operator types it, on a lab of
 * examples/lab-cluster (subnet 127.0.47.x) with a real Alertmanager and a real Prometheus: the dry
 * run shows what each reads now; a critical alert stops the run at its first gate (exit 3, naming
 * it) before anything changes; resolved, the run resumes with --silence-expected, an SLO and a
 * probe of the canary's Service, completes, and every silence it made has ended.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { appendFileSync, existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alertmanagerMissing,
  startAlertmanager,
  type TestAlertmanager,
} from '../adapters/alertmanager/testing-alertmanager.js';
import {
  prometheusMissing,
  startPrometheus,
  type TestPrometheus,
} from '../adapters/prometheus/testing-prometheus.js';
import { missingReason } from '../lab/etcd/binaries.js';
import { skipFor } from '../lab/testing-binaries.js';
import { decrypt } from '../mgmt/age.js';
import { Journal, journalPathFor } from '../run/journal.js';
import { CrashLab, disposeAllCrashLabs, REPO } from '../run/testing-crash-sweep.js';

const missing =
  alertmanagerMissing() ??
  prometheusMissing() ??
  (await missingReason('3.4')) ??
  (await missingReason('3.5'));
const CRITICAL = { alertname: 'KubePersistentVolumeFillingUp', severity: 'critical', namespace: 'shop' };

describe.skipIf(skipFor(missing))('ferry run with --alertmanager, --slo and --probe (lab)', () => {
  let am: TestAlertmanager;
  let prom: TestPrometheus;
  let cl: CrashLab;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-run-signals-'));
    [am, prom] = await Promise.all([startAlertmanager(), startPrometheus()]);
    prom.metrics.set('shop_up', 1);
    cl = await CrashLab.start({ dir, subnet: 47, phases: [0, 2] });
    await prom.scraped('shop_up');
  }, 120_000);
  afterAll(async () => {
    await disposeAllCrashLabs();
    await Promise.allSettled([am?.stop(), prom?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  const ferry = async (...extra: string[]) => {
    const child = spawn(process.execPath, [...cl.args(), ...extra], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c;
      process.env['FERRY_DEBUG_LOG'] && appendFileSync(process.env['FERRY_DEBUG_LOG'], c);
    });
    child.stderr!.on('data', (c: Buffer) => (out += c));
    const [code] = await once(child, 'exit');
    return { code: code as number | null, out };
  };

  it('stops at the first gate on a critical alert, then completes with silences, an SLO and a probe', async () => {
    await am.fire([CRITICAL]);
    const signals = ['--alertmanager', am.url, '--prometheus', prom.url, '--slo', 'min(shop_up) == 1'];

    const dry = await ferry(...signals, '--dry-run');
    expect(dry.code, dry.out).toBe(0);
    expect(dry.out).toMatch(
      /signal: Alertmanager 127\.0\.0\.1:\d+: 1 not holding, the run would stop at its first gate: KubePersistentVolumeFillingUp\{namespace="shop", severity="critical"\}/,
    );
    expect(dry.out).toMatch(/signal: SLO min\(shop_up\) == 1 on Prometheus 127\.0\.0\.1:\d+: clear/);

    const blocked = await ferry(...signals, '--gate-grace', '2');
    expect(blocked.code, blocked.out.slice(-3000)).toBe(3);
    expect(blocked.out).toMatch(
      /signals do not hold before 0\.\S+: Alertmanager \S+ reports 1: KubePersistentVolumeFillingUp/,
    );
    const j = Journal.open(journalPathFor(cl.planFile), { readonly: true });
    try {
      expect(j.transitions().filter((t) => t.state === 'action-started')).toEqual([]);
    } finally {
      j.close();
    }

    await am.resolve([CRITICAL]);
    const canary = cl.lab.info().canary!.url;
    const identity = await generateIdentity();
    const recipients = join(dir, 'recipients');
    await writeFile(recipients, `# ops\n${await identityToRecipient(identity)}\n`);
    const done = await ferry(
      '--snapshot-recipients-file',
      recipients,
      ...signals,
      '--silence-expected',
      '--probe',
      `${canary}/,max-fail=1%,interval=20`,
      '--resume',
    );
    expect(done.code, done.out.slice(-4000)).toBe(0);
    expect(done.out).toMatch(/silenced KubeNodeNotReady \{"node":"[^"]+"\} on Alertmanager/);

    // The report names the alert that stopped the first run and each silence, ended with its step.
    const report = await readFile(cl.planFile.replace(/\.json$/, '.report.md'), 'utf8');
    const section = report.slice(report.indexOf("## The cluster's own signals"));
    expect(section).toMatch(
      /\| `0\.\S+` \| Alertmanager \S+ \| KubePersistentVolumeFillingUp\{namespace="shop", severity="critical"\}/,
    );
    expect(section).toMatch(
      /\| `2\.\S+decommission\S+` \| KubeNodeNotReady\{node="[^"]+"\} \| \S+ \| with its step \|/,
    );
    expect(section).not.toMatch(/not by ferry/);

    // Its etcd snapshot: integrity-checked, encrypted at rest, listed in the journal with its sha256.
    const sj = Journal.open(journalPathFor(cl.planFile), { readonly: true });
    let snaps: { file: string; sha256: string; encrypted: boolean }[];
    try {
      snaps = sj
        .transitions()
        .filter((t) => t.stepId.includes('etcd-snapshot') && t.state === 'action-done')
        .map((t) => t.detail as { file: string; sha256: string; encrypted: boolean });
    } finally {
      sj.close();
    }
    expect(snaps.length).toBeGreaterThan(0);
    for (const sn of snaps) {
      expect(sn).toMatchObject({ encrypted: true, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(sn.file).toMatch(/\.age$/);
      expect(statSync(sn.file).mode & 0o777).toBe(0o600);
      expect(existsSync(sn.file.replace(/\.age$/, ''))).toBe(false);
      const plain = await decrypt(await readFile(sn.file), [identity], sn.file, 'identity');
      expect(createHash('sha256').update(plain).digest('hex')).toBe(sn.sha256);
    }

    const mine = (await am.silences()).filter((s) => s.createdBy === 'ferry');
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.filter((s) => s.status.state !== 'expired')).toEqual([]);
    const k = Journal.open(journalPathFor(cl.planFile), { readonly: true });
    try {
      const probes = k
        .observations({ purpose: 'probe' })
        .map((o) => (o.data as { summary: { name: string; attempts: number } }).summary);
      const mineProbe = probes.find(
        (p) => p.name.startsWith('127.0.0.47') || p.name.includes(new URL(canary).host),
      );
      expect(mineProbe?.attempts ?? 0).toBeGreaterThan(0);
    } finally {
      k.close();
    }
  }, 300_000);
});
