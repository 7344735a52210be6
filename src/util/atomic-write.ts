import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Writes a file atomically: a temporary sibling is written and fsynced, then renamed over the
 * target, so a reader never sees half a file. `mode` 0o600 for anything holding key material.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  opts: { mode?: number } = {},
): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', opts.mode ?? 0o644);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (err) {
    await fh.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Builds a whole directory in a temporary sibling and renames it into place only when `build`
 * succeeds; on failure nothing is left behind. Refuses to replace an existing directory unless
 * `force` is set.
 */
export async function writeDirAtomic(
  target: string,
  build: (tmpDir: string) => Promise<void>,
  opts: { force?: boolean } = {},
): Promise<void> {
  const parent = dirname(target);
  await mkdir(parent, { recursive: true });
  const tmp = join(parent, `.${randomBytes(6).toString('hex')}.ferry-tmp`);
  await mkdir(tmp, { mode: 0o700 });
  try {
    await build(tmp);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  const { existsSync } = await import('node:fs');
  if (existsSync(target)) {
    if (!opts.force) {
      await rm(tmp, { recursive: true, force: true });
      const { usageError } = await import('../errors.js');
      throw usageError(`${target} already exists`, 'choose another output directory or pass --force');
    }
    const old = `${tmp}.old`;
    await rename(target, old);
    await rename(tmp, target);
    await rm(old, { recursive: true, force: true });
    return;
  }
  await rename(tmp, target);
}
