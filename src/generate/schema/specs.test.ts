/**
 * The self-contained rule: the schema loader reads the package's own schemas/ and nothing outside
 * the repository (no sibling directory, no environment override). Every file-system call the loader
 * makes while loading every schema is recorded and checked.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FerryError } from '../../errors.js';
import { TALOS_RELEASES } from '../../knowledge/talos.js';

const touched: string[] = [];

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const spy =
    <A extends unknown[], R>(f: (p: string, ...rest: A) => R) =>
    (p: unknown, ...rest: A): R => {
      if (typeof p === 'string') touched.push(p);
      return f(p as string, ...rest);
    };
  const wrapped = {
    ...fs,
    existsSync: spy(fs.existsSync),
    readFileSync: spy(fs.readFileSync as (p: string, ...rest: unknown[]) => unknown),
    readdirSync: spy(fs.readdirSync as (p: string, ...rest: unknown[]) => unknown),
    realpathSync: spy(fs.realpathSync as (p: string, ...rest: unknown[]) => unknown),
  };
  return { ...wrapped, default: wrapped };
});

const { containedPath, schemaPath, schemasDir, talosSchemaFile } = await import('./specs.js');
const { validateTalosDocument } = await import('./talos.js');
const { CrdValidator } = await import('./crd.js');

const REPO = resolve(import.meta.dirname, '../../..');
const insideRepo = (p: string) => {
  const rel = relative(REPO, resolve(p));
  return !rel.startsWith('..') && !rel.startsWith('/');
};

afterEach(() => {
  delete process.env['FERRY_SPECS_DIR'];
});

describe('the schema loader stays inside the repository', () => {
  it('reads schemas/ of this package and nothing else, whatever the environment says', () => {
    process.env['FERRY_SPECS_DIR'] = resolve(REPO, '..', 'shared', 'specs');
    touched.length = 0;
    expect(schemasDir()).toBe(join(REPO, 'schemas'));
    for (const r of TALOS_RELEASES) {
      const file = talosSchemaFile(r.version);
      expect(relative(join(REPO, 'schemas', 'talos'), file)).toMatch(
        /^v\d+\.\d+\.[^/]+\/config\.schema\.json$/,
      );
      expect(
        validateTalosDocument({ apiVersion: 'v1alpha1', kind: 'Nope' }, r.version, 'patch'),
      ).toHaveLength(1);
    }
    const crds = CrdValidator.fromSchemas();
    expect(crds.knows('cluster.x-k8s.io/v1beta2', 'Cluster')).toBe(true);
    expect(touched.length).toBeGreaterThan(TALOS_RELEASES.length);
    expect(touched.filter((p) => !insideRepo(p))).toEqual([]);
    expect(touched.filter((p) => p.includes('shared'))).toEqual([]);
  });

  it('refuses a path that climbs out of schemas/, by name or by symlink', () => {
    for (const parts of [['..', '..', 'shared', 'specs'], ['talos/../../package.json'], ['/etc/passwd']]) {
      const err = (() => {
        try {
          schemaPath(...parts);
        } catch (e) {
          return e;
        }
      })();
      expect(err, parts.join('/')).toBeInstanceOf(FerryError);
      expect((err as FerryError).kind).toBe('internal');
    }
    const root = mkdtempSync(join(tmpdir(), 'ferry-schemas-'));
    try {
      mkdirSync(join(root, 'schemas'));
      writeFileSync(join(root, 'outside.json'), '{}');
      symlinkSync(join(root, 'outside.json'), join(root, 'schemas', 'link.json'));
      expect(() => containedPath(join(root, 'schemas'), 'link.json')).toThrow(/outside/);
      writeFileSync(join(root, 'schemas', 'own.json'), '{}');
      expect(containedPath(join(root, 'schemas'), 'own.json')).toBe(join(root, 'schemas', 'own.json'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
