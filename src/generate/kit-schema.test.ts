/**
 * generate validates every Talos document and Cluster API object it writes at run time: a
 * generator that produces an invalid one makes `generate` fail as an internal error (exit 4),
 * and nothing is written — not the kit, not a temporary directory beside it.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { writeFixture } from '../snapshot/testing-small-cluster.js';
import type { Artifact } from './artifact.js';
import type { Generator } from './context.js';
import { GENERATORS, generateKit } from './kit.js';
import { talosGenerator } from './talos/generator.js';

const TOKEN = 'abcdef.0123456789abcdef';

let root: string;
let cluster: string;
let pki: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ferry-kit-schema-'));
  cluster = join(root, 'cluster');
  pki = (await writeFixture(cluster)).pki;
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The kit's generators, with the Talos generator's output bent by `bend`. */
function withBentTalos(bend: (artifacts: Artifact[]) => Artifact[]): Generator[] {
  const bent: Generator = {
    name: 'talos',
    async generate(ctx) {
      const r = await talosGenerator.generate(ctx);
      return r.kind === 'ok' ? { ...r, artifacts: bend(r.artifacts) } : r;
    },
  };
  return GENERATORS.map((g) => (g === talosGenerator ? bent : g));
}

async function generateWith(generators: Generator[], name: string) {
  const outDir = join(root, name);
  const err = await generateKit({
    snapshotPath: cluster,
    pkiDir: pki,
    outDir,
    target: {},
    bootstrapToken: TOKEN,
    generators,
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { outDir, err };
}

async function expectRefusedAsBug(generators: Generator[], name: string, re: RegExp): Promise<FerryError> {
  const { outDir, err } = await generateWith(generators, name);
  expect(err).toBeInstanceOf(FerryError);
  const e = err as FerryError;
  expect(e.kind).toBe('internal');
  expect(e.exitCode).toBe(4);
  expect(e.message).toMatch(re);
  expect(existsSync(outDir)).toBe(false);
  expect((await readdir(root)).filter((f) => f.startsWith(name) || f.includes('ferry-tmp'))).toEqual([]);
  return e;
}

describe('generate validates what it writes, at run time', () => {
  it('an invalid complete config: internal error naming the file, no key material, nothing written', async () => {
    const e = await expectRefusedAsBug(
      withBentTalos((as) =>
        as.map((a) =>
          a.path === 'talos/full/talos-cp-1.yaml'
            ? { ...a, content: a.content.replace(/^ {2}type: controlplane$/m, '  type: controlplan') }
            : a,
        ),
      ),
      'kit-bad-config',
      /talos\/full\/talos-cp-1\.yaml: v1alpha1 \/machine\/type: must be equal to one of the allowed values/,
    );
    expect(e.message).not.toMatch(/PRIVATE KEY|LS0tLS1/);
  });

  it('a complete config missing what makes it complete (machine.token) is refused', async () => {
    await expectRefusedAsBug(
      withBentTalos((as) =>
        as.map((a) =>
          a.path === 'talos/full/replacing-worker-1.yaml'
            ? { ...a, content: a.content.replace(/^ {2}token: .*$/m, '') }
            : a,
        ),
      ),
      'kit-no-token',
      /talos\/full\/replacing-worker-1\.yaml: v1alpha1 \/machine\/token: a complete worker config has this value/,
    );
  });

  it('an unknown field in a patch is refused', async () => {
    await expectRefusedAsBug(
      withBentTalos((as) =>
        as.map((a) =>
          a.path === 'talos/worker-patch.yaml'
            ? { ...a, content: `${a.content}---\nversion: v1alpha1\nmachin: {}\n` }
            : a,
        ),
      ),
      'kit-bad-patch',
      /talos\/worker-patch\.yaml: .*must NOT have additional properties \(machin\)/,
    );
  });

  it('a Cluster API object that fails its CRD is refused', async () => {
    const capi: Generator = {
      name: 'capi-test',
      generate: (ctx) => ({
        kind: 'ok',
        notes: [],
        artifacts: [
          {
            path: 'capi/cluster.yaml',
            content:
              'apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: demo}\nspec: {controlPlaneEndpont: {}}\n',
            mode: 0o644,
            purpose: 'test',
            step: 41,
            provenance: {},
            secret: false,
            schema: { kind: 'capi', talosVersion: ctx.target.talosVersion },
          },
        ],
      }),
    };
    await expectRefusedAsBug(
      [...GENERATORS, capi],
      'kit-bad-capi',
      /capi\/cluster\.yaml: Cluster demo .*controlPlaneEndpont/,
    );
  });

  it('the kit as generated passes, and every Talos file it writes carries its schema', async () => {
    const { outDir, err } = await generateWith(GENERATORS, 'kit-ok');
    expect(err).toBeUndefined();
    expect(existsSync(join(outDir, 'talos/full/talos-cp-1.yaml'))).toBe(true);
  });
});
