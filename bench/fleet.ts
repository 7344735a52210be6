/**
 * bench/fleet (docs/benchmarks.md "fleet"): a fleet of small lab clusters (lab API servers in this
 * process, 127.0.210.1 on, each a synthetic cluster of its own size) audited in the same run by
 * `ferry fleet audit` (the built CLI, one process, --concurrency N) and by one `ferry audit
 * --kubeconfig` per cluster, one after the other: wall time of each, the fleet's peak RSS against
 * the single audit of the largest cluster (both by /usr/bin/time), and whether the fleet report's
 * figures are the sum of the single reports. Targets: ≥ 3× less wall time; peak RSS ≤ 2×.
 *
 *   npm run bench -- fleet [--clusters N] [--concurrency N] [--ferry DIR]
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { MemoryStore } from '../src/lab/apiserver/memory-store.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../src/lab/apiserver/testing.js';
import { seed } from './collect.js';
import { type Bench, mib, ms } from './lib/bench.js';
import { buildFerry, measure, type Sample } from './lib/child-measure.js';

type Counts = Record<'blocker' | 'risk' | 'info', number>;

/** Cluster i's size: 10 to 10 + 34 nodes for 35 clusters, 20 pods a node, so the largest is ~4× the smallest. */
const sizeOf = (i: number) => ({ nodes: 10 + i, pods: 20 * (10 + i), namespaces: 8 + (i % 5) });

export const bench: Bench = {
  name: 'fleet',
  summary: 'ferry fleet audit of 35 lab clusters vs 35 ferry audit runs one after the other (time, peak RSS)',
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        clusters: { type: 'string', default: '35' },
        concurrency: { type: 'string', default: '4' },
        ferry: { type: 'string' },
      },
    });
    const n = Number(values.clusters);
    if (!Number.isInteger(n) || n < 1 || n > 200) throw new Error('--clusters must be 1..200');
    const dir = await mkdtemp(join(tmpdir(), 'ferry-bench-fleet-'));
    const labs: LabApiFixture[] = [];
    try {
      const ferryDir = values.ferry ? resolve(values.ferry) : join(dir, 'ferry');
      if (!values.ferry) await buildFerry(ferryDir);
      const main = join(ferryDir, 'dist/cli/main.js');
      const names: string[] = [];
      for (let i = 0; i < n; i++) {
        const store = new MemoryStore();
        const lab = await startLabApi({ host: `127.0.210.${i + 1}`, store });
        labs.push(lab);
        await seed(store, sizeOf(i), `127.0.210.${i + 1}:${lab.server.port}`);
        const name = `c${String(i + 1).padStart(2, '0')}`;
        names.push(name);
        await writeAdminKubeconfig(lab, join(dir, `${name}.conf`));
      }
      const largest = names[n - 1]!;
      console.log(
        `${n} clusters seeded: ${sizeOf(0).nodes}–${sizeOf(n - 1).nodes} nodes, ${sizeOf(0).pods}–${sizeOf(n - 1).pods} pods`,
      );
      await writeFile(
        join(dir, 'fleet.yaml'),
        [
          'apiVersion: ferry.dev/v1alpha1',
          'kind: Fleet',
          'clusters:',
          ...names.map((c) => `  - {name: ${c}, kubeconfig: ${c}.conf}`),
          '',
        ].join('\n'),
      );
      const env = { ...process.env, NO_COLOR: '1' };

      // One after the other, as a team without fleet would run them.
      const singles: Sample[] = [];
      const singleCounts: Counts[] = [];
      for (const c of names) {
        const out = join(dir, `${c}.report.json`);
        const argv = [process.execPath, main, 'audit', '--kubeconfig', join(dir, `${c}.conf`), '-o', 'json'];
        singles.push(await measure([...argv, '--fail-on', 'never'], out, env));
        singleCounts.push((JSON.parse(await readFile(out, 'utf8')) as { counts: Counts }).counts);
      }
      const fleetOut = join(dir, 'fleet.json');
      const fleet = await measure(
        [
          process.execPath,
          main,
          'fleet',
          'audit',
          join(dir, 'fleet.yaml'),
          '--concurrency',
          String(values.concurrency),
          '--out',
          join(dir, 'fleet-audit'),
          '--fail-on',
          'never',
          '-o',
          'json',
        ],
        fleetOut,
        env,
      );
      const report = JSON.parse(await readFile(fleetOut, 'utf8')) as {
        clusters: { name: string; verdict: string; counts: Counts }[];
      };

      const sumWall = singles.reduce((a, s) => a + s.wallMs, 0);
      const largestRss = singles[n - 1]!.rssKiB * 1024;
      const sum = (cs: Counts[]) =>
        cs.reduce(
          (a, c) => ({ blocker: a.blocker + c.blocker, risk: a.risk + c.risk, info: a.info + c.info }),
          {
            blocker: 0,
            risk: 0,
            info: 0,
          },
        );
      const byName = new Map(report.clusters.map((c) => [c.name, c]));
      const same = (a: Counts | undefined, b: Counts) =>
        a !== undefined && a.blocker === b.blocker && a.risk === b.risk && a.info === b.info;
      const perCluster = names.filter((c, i) => !same(byName.get(c)?.counts, singleCounts[i]!));
      const fleetSum = sum(names.map((c) => byName.get(c)?.counts ?? { blocker: 0, risk: 0, info: 0 }));
      const singleSum = sum(singleCounts);
      const unread = report.clusters.filter((c) => c.verdict === 'unreachable' || c.verdict === 'unreadable');

      console.log(
        `${n} × ferry audit:     ${ms(sumWall)} wall in all; ${largest}'s peak RSS ${mib(largestRss)}`,
      );
      console.log(
        `ferry fleet audit:  ${ms(fleet.wallMs)} wall; peak RSS ${mib(fleet.rssKiB * 1024)} (--concurrency ${values.concurrency})`,
      );
      console.log(
        `wall time:  ${(sumWall / fleet.wallMs).toFixed(2)}× less (target ≥ 3×) ${sumWall / fleet.wallMs >= 3 ? 'met' : 'MISSED'}`,
      );
      const rssRatio = (fleet.rssKiB * 1024) / largestRss;
      console.log(
        `peak RSS:   ${rssRatio.toFixed(2)}× the largest single audit (target ≤ 2×) ${rssRatio <= 2 ? 'met' : 'MISSED'}`,
      );
      console.log(
        `figures:    fleet ${fleetSum.blocker} blockers, ${fleetSum.risk} risks, ${fleetSum.info} info; sum of single reports ${singleSum.blocker}, ${singleSum.risk}, ${singleSum.info}: ${
          perCluster.length === 0 && unread.length === 0
            ? 'equal, cluster by cluster'
            : `DIFFER (${[...perCluster, ...unread.map((c) => c.name)].join(', ')})`
        }`,
      );
    } finally {
      await Promise.all(labs.map((l) => l.stop()));
      await rm(dir, { recursive: true, force: true });
    }
  },
};
