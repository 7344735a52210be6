/**
 * The layer map of design.md "Layout", checked on the real import graph (every relative import of
 * every file under src/, type-only and dynamic imports included). The core plans, adapters act,
 * src/app wires them (and the lab) together; src/cli parses flags and calls the rest.
 *
 * Production files must keep to MAY_IMPORT. Test code (*.test.ts and the colocated testing*.ts
 * support) may reach across layers, since it runs the real stack against a lab, with two limits
 * that hold for every file: nothing under src/ imports test/, and the lab is reached only from
 * test code, src/app and the `ferry lab` command.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The pure core: no I/O of its own, it talks to src/ports. */
const CORE = [
  'snapshot',
  'facts',
  'audit',
  'generate',
  'plan',
  'kit',
  'capi',
  'upgrade',
  'pki',
  'ports',
  'fleet',
] as const;
/** Below the core: knowledge (version tables, signatures) and util (primitives). */
const BELOW_CORE = ['knowledge', 'util', 'base'] as const;
const OUTER = ['adapters', 'run', 'mgmt', 'lab', 'app', 'cli'] as const;
type Area = (typeof CORE)[number] | (typeof BELOW_CORE)[number] | (typeof OUTER)[number];

/**
 * Which areas a production file of an area may import (its own area is always allowed). "base" is
 * src/errors.ts and src/version.ts, which every layer uses and which import nothing.
 */
const MAY_IMPORT: Readonly<Record<Area, readonly Area[]>> = {
  base: [],
  util: ['base'],
  knowledge: ['util', 'base'],
  ...(Object.fromEntries(CORE.map((a) => [a, [...CORE, ...BELOW_CORE]])) as Record<
    (typeof CORE)[number],
    Area[]
  >),
  adapters: [...CORE, ...BELOW_CORE],
  run: [...CORE, ...BELOW_CORE],
  mgmt: [...CORE, ...BELOW_CORE, 'adapters', 'run'],
  lab: [...CORE, ...BELOW_CORE, 'adapters'],
  app: [...CORE, ...BELOW_CORE, 'adapters', 'run', 'mgmt', 'lab'],
  cli: [...CORE, ...BELOW_CORE, 'adapters', 'run', 'mgmt', 'app'],
};

/** Who may import the lab: test code, the composition root and the `ferry lab` command. */
const LAB_DOORS: readonly RegExp[] = [
  /\.test\.ts$/,
  /\/testing[^/]*\.ts$/,
  /^src\/app\//,
  /^src\/cli\/lab[^/]*\.ts$/,
];

const isTestCode = (f: string) => /\.test\.ts$/.test(f) || /\/testing[^/]*\.ts$/.test(f);

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : /\.m?ts$/.test(e.name) ? [p] : [];
  });
}

/** The area of a repo-relative path, or null outside src/ (test/, bench/, a package). */
function areaOf(path: string): Area | 'test' | null {
  const parts = path.split('/');
  if (parts[0] === 'test') return 'test';
  if (parts[0] !== 'src') return null;
  if (parts.length === 2) return 'base';
  const a = parts[1] as Area;
  if (!(a in MAY_IMPORT)) throw new Error(`${path}: src/${a} is in no layer: add it to MAY_IMPORT`);
  return a;
}

interface Edge {
  from: string;
  to: string;
}

const EDGES: Edge[] = tsFiles(join(ROOT, 'src')).flatMap((f) =>
  ts
    .preProcessFile(readFileSync(f, 'utf8'), true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((s) => s.startsWith('.'))
    .map((s) => ({
      from: relative(ROOT, f),
      to: relative(ROOT, resolve(dirname(f), s)).replace(/\.m?js$/, '.ts'),
    })),
);

const show = (e: Edge, why: string) => `${e.from} → ${e.to}: ${why}`;

/** Production edges MAY_IMPORT does not allow, each with both files named. */
function tableViolations(edges: readonly Edge[]): string[] {
  return edges
    .filter((e) => !isTestCode(e.from))
    .flatMap((e) => {
      const from = areaOf(e.from) as Area;
      const to = areaOf(e.to);
      if (to === null || to === 'test' || to === from || MAY_IMPORT[from].includes(to)) return [];
      if (to === 'lab' && LAB_DOORS.some((r) => r.test(e.from))) return [];
      return [show(e, `${from} may not import ${to}`)];
    });
}

/** Edges into the lab from outside it that come through no LAB_DOORS file (test code included). */
function labViolations(edges: readonly Edge[]): string[] {
  return edges
    .filter(
      (e) => areaOf(e.to) === 'lab' && areaOf(e.from) !== 'lab' && !LAB_DOORS.some((r) => r.test(e.from)),
    )
    .map((e) => show(e, 'only test code, src/app and the lab command reach the lab'));
}

describe('layers', () => {
  it('reads the whole graph', () => {
    expect(EDGES.length).toBeGreaterThan(3000);
    for (const a of [...CORE, ...BELOW_CORE, ...OUTER])
      if (a !== 'base')
        expect(
          EDGES.some((e) => e.from.startsWith(`src/${a}/`)),
          a,
        ).toBe(true);
  });

  it('production code imports only the layers MAY_IMPORT allows', () => {
    expect(tableViolations(EDGES)).toEqual([]);
  });

  it('the lab is reached only from test code, src/app and src/cli/lab*.ts', () => {
    expect(labViolations(EDGES)).toEqual([]);
  });

  // Test support lives beside what it supports (src/**/testing*.ts): test code under src/ too.
  it('nothing under src/ imports test/', () => {
    const bad = EDGES.filter((e) => areaOf(e.to) === 'test').map((e) => show(e, 'src/ never imports test/'));
    expect(bad).toEqual([]);
  });

  it('a new back edge fails with both files named', () => {
    expect(
      tableViolations([
        { from: 'src/snapshot/collect.ts', to: 'src/adapters/kube/reader.ts' },
        { from: 'src/util/ip.ts', to: 'src/facts/model.ts' },
        { from: 'src/knowledge/talos.ts', to: 'src/facts/semver.ts' },
        { from: 'src/run/orchestrator.ts', to: 'src/app/session.ts' },
        { from: 'src/snapshot/collect.test.ts', to: 'src/adapters/kube/reader.ts' },
        { from: 'src/app/session.ts', to: 'src/run/journal.ts' },
      ]),
    ).toEqual([
      'src/snapshot/collect.ts → src/adapters/kube/reader.ts: snapshot may not import adapters',
      'src/util/ip.ts → src/facts/model.ts: util may not import facts',
      'src/knowledge/talos.ts → src/facts/semver.ts: knowledge may not import facts',
      'src/run/orchestrator.ts → src/app/session.ts: run may not import app',
    ]);
    expect(
      labViolations([
        { from: 'src/run/observe.ts', to: 'src/lab/cluster.ts' },
        { from: 'src/cli/run.ts', to: 'src/lab/state.ts' },
        { from: 'src/cli/lab.ts', to: 'src/lab/state.ts' },
        { from: 'src/app/rehearse.ts', to: 'src/lab/cluster.ts' },
        { from: 'src/plan/swap-world.test.ts', to: 'src/lab/nodes/world.ts' },
      ]),
    ).toEqual([
      'src/run/observe.ts → src/lab/cluster.ts: only test code, src/app and the lab command reach the lab',
      'src/cli/run.ts → src/lab/state.ts: only test code, src/app and the lab command reach the lab',
    ]);
  });
});
