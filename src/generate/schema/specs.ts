/**
 * Where the schemas live: `schemas/` at the package root (design.md "Schemas to validate against"),
 * the repository's own copies of the upstream files (schemas/README.md names each source). Found
 * relative to this module, so the same code works from src/ (tsx, tests) and from dist/ (the
 * installed package ships `schemas`). Every path handed out is checked to stay inside that
 * directory: nothing reads the shared specs next to the repository (scripts/refresh-schemas.ts
 * copies them, when a developer runs it).
 */
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FerryError } from '../../errors.js';

const REFRESH = 'reinstall ferry, or in a checkout run `npx tsx scripts/refresh-schemas.ts`';

/** The directory holding package.json, found by walking up from this module. */
export function packageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) {
      throw new FerryError('internal', `no package.json above ${from}: cannot find ferry's schemas/`, {
        remediation: REFRESH,
      });
    }
    dir = up;
  }
}

export function schemasDir(): string {
  return join(packageRoot(), 'schemas');
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * A path under `root`, refused (internal error) when it would leave it — by `..` or an absolute
 * part, or by a symlink pointing elsewhere.
 */
export function containedPath(root: string, ...parts: string[]): string {
  const path = resolve(root, ...parts);
  const escapes =
    !inside(root, path) || (existsSync(path) && !inside(realpathSync(root), realpathSync(path)));
  if (escapes) {
    throw new FerryError('internal', `schema path ${parts.join('/')} resolves outside ${root}`, {
      remediation: 'schemas are read from the package only; report this as a bug',
    });
  }
  return path;
}

/** A path under schemas/ (see containedPath). */
export function schemaPath(...parts: string[]): string {
  return containedPath(schemasDir(), ...parts);
}

/** The Talos schema for a release: the copy of the same minor (newest copy wins). */
export function talosSchemaFile(talosVersion: string): string {
  const m = /^v?(\d+)\.(\d+)/.exec(talosVersion);
  const base = schemaPath('talos');
  if (!m || !existsSync(base)) {
    throw new FerryError('internal', `no Talos schema directory for ${talosVersion} under ${base}`, {
      remediation: REFRESH,
    });
  }
  const prefix = `v${m[1]}.${m[2]}.`;
  const pick = readdirSync(base)
    .filter((d) => d.startsWith(prefix) && existsSync(join(base, d, 'config.schema.json')))
    .sort()
    .at(-1);
  if (!pick) {
    throw new FerryError('internal', `no config.schema.json for Talos ${m[1]}.${m[2]} under ${base}`, {
      remediation: `add the release's schema to scripts/refresh-schemas.ts and run it (${REFRESH})`,
    });
  }
  return schemaPath('talos', pick, 'config.schema.json');
}

/** The CustomResourceDefinitions generate validates Cluster API objects against. */
export function capiSchemasDir(): string {
  return schemaPath('capi');
}
