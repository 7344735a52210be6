/**
 * bench/audit-scale (docs/benchmarks.md "audit-scale"): a synthetic snapshot of 5,000 nodes and 150,000 pods with a
 * share of traps; in the same run, the audit's wall time and peak RSS (a child process running what
 * `ferry audit SNAPSHOT -o json` runs) against the time parsing the same resources dump takes
 * (another child). Targets: audit ≤ 2× parse time, peak RSS ≤ 3× the dump's size.
 *
 *   npm run bench -- audit-scale [--nodes N] [--pods N] [--namespaces N] [--repeat N]
 *                                [--keep] [--snapshot DIR] [--profile DIR]
 *
 * --repeat N measures N parse/audit pairs and reports the medians (a shared machine is noisy);
 * --keep leaves the generated snapshot on disk and --snapshot DIR measures one kept earlier;
 * --profile DIR runs the audit child with `node --cpu-prof` and leaves the .cpuprofile in DIR.
 * It also renders the human formats (table, md, html: grouped by rule) and prints their time and size.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { AuditChildResult } from './lib/audit-child.js';
import { type Bench, mib, ms } from './lib/bench.js';
import type { ParseChildResult } from './lib/parse-child.js';
import { type WrittenSnapshot, writeSyntheticSnapshot } from './lib/write-snapshot.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '..');
const TARGET_TIME_RATIO = 2;
const TARGET_RSS_RATIO = 3;

function child<T>(script: string, args: string[], nodeFlags: string[] = []): T {
  const res = spawnSync(
    process.execPath,
    [...nodeFlags, '--import', 'tsx', join(HERE, 'lib', script), ...args],
    {
      cwd: REPO,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  if (res.status !== 0) throw new Error(`${script} exited with ${res.status ?? res.signal}`);
  const last = res.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as T;
}

/** What was generated, next to the snapshot (not inside it), for --snapshot. */
function sidecar(dir: string): string {
  return `${dir}.bench.json`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function verdict(ratio: number, target: number): string {
  return `${ratio.toFixed(2)}× (target ≤ ${target}×) ${ratio <= target ? 'ok' : 'MISSED'}`;
}

export const bench: Bench = {
  name: 'audit-scale',
  summary: 'audit of 5,000 nodes / 150,000 pods vs parsing the same dump (time, peak RSS)',
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        nodes: { type: 'string', default: '5000' },
        pods: { type: 'string', default: '150000' },
        namespaces: { type: 'string', default: '300' },
        repeat: { type: 'string', default: '1' },
        keep: { type: 'boolean', default: false },
        profile: { type: 'string' },
        snapshot: { type: 'string' },
      },
    });
    const size = {
      nodes: Number(values.nodes),
      pods: Number(values.pods),
      namespaces: Number(values.namespaces),
      controlPlanes: ['cp-1', 'cp-2', 'cp-3'],
    };
    const repeat = Math.max(1, Number(values.repeat) || 1);
    const reuse = values.snapshot !== undefined;
    const root = reuse ? undefined : await mkdtemp(join(tmpdir(), 'ferry-bench-'));
    const dir = reuse ? resolve(values.snapshot!) : join(root!, 'snapshot');
    try {
      const g0 = performance.now();
      let snap: WrittenSnapshot;
      if (reuse) snap = JSON.parse(await readFile(sidecar(dir), 'utf8')) as WrittenSnapshot;
      else {
        snap = await writeSyntheticSnapshot(join(REPO, 'examples', 'lab-cluster'), dir, size);
        await writeFile(sidecar(dir), JSON.stringify(snap));
      }
      const objects = Object.values(snap.counts.objects).reduce((a, b) => a + (b ?? 0), 0);
      console.log(
        `synthetic snapshot${reuse ? ` ${dir}` : ''}: ${snap.counts.objects.nodes ?? 0} nodes, ${snap.counts.objects.pods ?? 0} pods, ${objects} generated objects; resources dump ${mib(snap.dumpBytes)}${reuse ? '' : ` (written in ${ms(performance.now() - g0)})`}`,
      );
      console.log(
        `  traps planted: ${Object.entries(snap.counts.traps)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}`,
      );

      const profileFlags = values.profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(values.profile)}`] : [];
      const parses: ParseChildResult[] = [];
      const audits: AuditChildResult[] = [];
      for (let i = 0; i < repeat; i++) {
        parses.push(child<ParseChildResult>('parse-child.ts', snap.files));
        audits.push(child<AuditChildResult>('audit-child.ts', [dir], profileFlags));
      }
      const m = <T>(list: T[], f: (x: T) => number) => median(list.map(f));
      const parseMs = m(parses, (p) => p.decodeParseMs);
      const parseCpu = m(parses, (p) => p.decodeParseCpuMs);
      const parseCalls = m(parses, (p) => p.parseCallsMs);
      const auditMs = m(audits, (a) => a.auditMs);
      const auditCpu = m(audits, (a) => a.auditCpuMs);
      const rss = m(audits, (a) => a.vmHwmBytes ?? a.maxRssBytes);
      const last = audits[audits.length - 1]!;
      const of = repeat > 1 ? ` (median of ${repeat})` : '';

      console.log(
        `parse the dump${of}: ${ms(parseMs)} wall, ${ms(parseCpu)} CPU (decoding + JSON.parse; the JSON.parse calls alone ${ms(parseCalls)}); ${parses[0]!.objects} objects, that process peaked at ${mib(parses[0]!.maxRssBytes)}`,
      );
      console.log(
        `audit${of}: ${ms(auditMs)} wall, ${ms(auditCpu)} CPU = load ${ms(m(audits, (a) => a.loadMs))} + facts ${ms(m(audits, (a) => a.factsMs))} + rules ${ms(m(audits, (a) => a.rulesMs))}; render -o json ${ms(m(audits, (a) => a.renderMs))} (${mib(last.reportBytes)})`,
      );
      console.log(
        `  ${last.findings} findings (${Object.entries(last.byRule)
          .sort((a, b) => b[1] - a[1])
          .map(([id, n]) => `${id} ${n}`)
          .join(', ')}); ${last.errors.length} rule errors; skipped: ${last.skipped.join(', ') || 'none'}`,
      );
      for (const e of last.errors) console.log(`  rule error ${e.ruleId}: ${e.message}`);
      console.log(
        `human reports (grouped by rule)${of}: ${(['table', 'md', 'html'] as const)
          .map((format) => {
            const t = m(audits, (a) => a.human.find((x) => x.format === format)!.ms);
            const bytes = last.human.find((x) => x.format === format)!.bytes;
            return `${format} ${ms(t)} (${mib(bytes)})`;
          })
          .join(', ')}; -o json ${ms(m(audits, (a) => a.renderMs))}`,
      );
      console.log(`audit / parse wall time: ${verdict(auditMs / parseMs, TARGET_TIME_RATIO)}`);
      console.log(
        `  (CPU time ${(auditCpu / parseCpu).toFixed(2)}×, steadier when the machine is shared; against the JSON.parse calls alone ${(auditMs / parseCalls).toFixed(2)}×)`,
      );
      console.log(
        `audit peak RSS: ${mib(rss)}, ${verdict(rss / snap.dumpBytes, TARGET_RSS_RATIO).replace(' (', " the dump's size (")}`,
      );
      if (values.profile) console.log(`CPU profile of the audit child written to ${resolve(values.profile)}`);
      if (values.keep) console.log(`snapshot kept in ${dir}`);
    } finally {
      if (root && !values.keep) await rm(root, { recursive: true, force: true });
    }
  },
};
