/**
 * examples/fleet: the committed snapshots are what scripts/make-example-fleet.ts makes from the
 * committed examples/lab-cluster, and `ferry fleet audit` on the example fleet gives each cluster
 * the verdict the fleet file's comment promises (a down live member included); `ferry fleet
 * schedule` on its live part (nightly.yaml) writes the two CronJobs and a Secret command whose
 * files all exist, with no credential in the manifests.
 */
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { listFiles } from '../../scripts/make-example.js';
import { makeExampleFleet, VARIANTS } from '../../scripts/make-example-fleet.js';
import { memoryIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/run-cli.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FLEET = join(REPO, 'examples', 'fleet');
const COMMITTED = join(FLEET, 'snapshots');

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ferry-example-fleet-test-'));
});
afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** The ferry version a snapshot records changes with each release; nothing else may. */
const comparable = (rel: string, text: string) =>
  rel.endsWith('manifest.json') ? text.replace(/"ferryVersion": "[^"]*"/, '"ferryVersion": "-"') : text;

describe('examples/fleet', () => {
  it('the committed snapshots are what the generator makes from the committed example', async () => {
    const out = join(tmp, 'snapshots');
    await makeExampleFleet(out);
    const files = await listFiles(out);
    expect(await listFiles(COMMITTED), 'run `npx tsx scripts/make-example-fleet.ts`').toEqual(files);
    expect(files.filter((f) => f.endsWith('manifest.json'))).toHaveLength(VARIANTS.length);
    for (const f of files) {
      const made = comparable(f, await readFile(join(out, f), 'utf8'));
      const committed = comparable(f, await readFile(join(COMMITTED, f), 'utf8'));
      expect(committed, `${f}: run \`npx tsx scripts/make-example-fleet.ts\``).toBe(made);
    }
  });

  it('fleet audit: the canary with 5 blockers, the two prod snapshots with 10 and 11, the live one unreachable', async () => {
    const io = memoryIo({ cwd: FLEET });
    const code = await runCli(['fleet', 'audit', 'fleet.yaml', '-o', 'json', '--out', join(tmp, 'out')], io);
    expect(code).toBe(1);
    const report = JSON.parse(io.out) as {
      clusters: { name: string; verdict: string; counts: { blocker: number }; reason?: string }[];
    };
    const by = Object.fromEntries(report.clusters.map((c) => [c.name, c]));
    expect(report.clusters.map((c) => c.name)).toEqual([
      'staging-eu-1',
      'prod-eu-1',
      'prod-eu-2',
      'prod-us-1',
    ]);
    expect(by['staging-eu-1']).toMatchObject({ verdict: 'blocked', counts: { blocker: 5 } });
    expect(by['prod-eu-1']).toMatchObject({ verdict: 'blocked', counts: { blocker: 10 } });
    expect(by['prod-eu-2']).toMatchObject({ verdict: 'blocked', counts: { blocker: 11 } });
    expect(by['prod-us-1']?.verdict).toBe('unreachable');
    expect(by['prod-us-1']?.reason).toMatch(/127\.0\.0\.1:9.*refused/);
  });

  it('fleet schedule on nightly.yaml: the audit and backup CronJobs, and a Secret command that works as printed', async () => {
    const io = memoryIo({ cwd: REPO });
    const out = join(tmp, 'schedule');
    const code = await runCli(['fleet', 'schedule', 'examples/fleet/nightly.yaml', '-o', out], io);
    expect(io.err).toBe('');
    expect(code).toBe(0);
    const manifests = await readFile(join(out, 'manifests.yaml'), 'utf8');
    const docs = parseAllDocuments(manifests).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string } },
    );
    expect(docs.filter((d) => d.kind === 'CronJob').map((d) => d.metadata.name)).toEqual([
      'ferry-fleet-audit',
      'ferry-mgmt-backup-mgmt-eu',
    ]);
    // Every --from-file the printed command names is there to read.
    const secret = io.out.split('\n').find((l) => l.includes('create secret generic')) ?? '';
    const files = [...secret.matchAll(/--from-file=[^=\s]+=(\S+)/g)].map((m) => m[1]!);
    expect(files).toHaveLength(5);
    for (const f of files) await access(f);
    const credentials = await readFile(join(FLEET, 's3', 'credentials'), 'utf8');
    expect(credentials).toContain('example-not-a-secret');
    expect(manifests).not.toContain('example-not-a-secret');
    expect(manifests).not.toContain('example-not-a-credential');
  });
});
