/**
 * Where the upstream schemas live: `../shared/specs/` next to the repository (design.md "Schemas to
 * validate against"), overridable with FERRY_SPECS_DIR. They are test and development inputs, not
 * shipped with the package, so a missing directory is reported with how to point ferry at it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FerryError } from '../../errors.js';

export function specsDir(): string {
  const fromEnv = process.env['FERRY_SPECS_DIR'];
  if (fromEnv) return resolve(fromEnv);
  // Walk up from this file to the directory holding package.json, then ../shared/specs.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, 'package.json'))) return resolve(dir, '..', 'shared', 'specs');
    dir = dirname(dir);
  }
  return resolve('..', 'shared', 'specs');
}

/** The folder of specs/talos holding the schema for a Talos release (same minor; newest copy wins). */
export function talosSchemaFile(talosVersion: string, root = specsDir()): string {
  const m = /^v?(\d+)\.(\d+)/.exec(talosVersion);
  const base = join(root, 'talos');
  if (!m || !existsSync(base)) {
    throw new FerryError('internal', `no Talos schema directory for ${talosVersion} under ${base}`, {
      remediation:
        'set FERRY_SPECS_DIR to the shared/specs directory that holds talos/<version>/config.schema.json',
    });
  }
  const prefix = `v${m[1]}.${m[2]}.`;
  const dirs = readdirSync(base)
    .filter((d) => d.startsWith(prefix) && existsSync(join(base, d, 'config.schema.json')))
    .sort();
  const pick = dirs.at(-1);
  if (!pick) {
    throw new FerryError('internal', `no config.schema.json for Talos ${m[1]}.${m[2]} under ${base}`, {
      remediation: 'copy the schema of that release into shared/specs/talos/<version>/',
    });
  }
  return join(base, pick, 'config.schema.json');
}

export function capiSpecsDir(root = specsDir()): string {
  return join(root, 'capi');
}
