import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type FerryError, inputError, type Location, usageError } from '../errors.js';

/** The flag (or a noun phrase) that named an output path, for the error when it cannot be written. */
export interface OutputOrigin {
  flag?: string;
  /** The path as the user typed it; default the path written. */
  shown?: string;
}

/**
 * A write that failed because of where the user asked ferry to write (a parent that is a file, a
 * directory in the way, no permission, a read-only file system) is bad input naming the flag and
 * the path; anything else (a full disk, an I/O error) stays what it is.
 */
function outputError(path: string, err: unknown, origin: OutputOrigin): FerryError | undefined {
  const shown = origin.shown ?? path;
  const subject = origin.flag ? `${origin.flag} ${shown}` : shown;
  const loc: Location = { file: shown };
  if (origin.flag) loc.field = origin.flag;
  const again = `name another path${origin.flag ? ` with ${origin.flag}` : ''}`;
  switch ((err as NodeJS.ErrnoException).code) {
    case 'EEXIST':
    case 'ENOTDIR':
      return inputError(
        `cannot write ${subject}: a parent of it is a file, not a directory`,
        loc,
        again,
        err,
      );
    case 'EISDIR':
      return inputError(
        `cannot write ${subject}: it is a directory`,
        loc,
        `${again}, or remove the directory`,
        err,
      );
    case 'EACCES':
    case 'EPERM':
      return inputError(
        `cannot write ${subject}: permission denied`,
        loc,
        `${again} in a directory you may write, or run ferry as a user who may write there`,
        err,
      );
    case 'EROFS':
      return inputError(`cannot write ${subject}: the file system is read-only`, loc, again, err);
    default:
      return undefined;
  }
}

/** Runs a step of writing `path`; a failure caused by the path itself becomes an input error. */
async function at<T>(path: string, origin: OutputOrigin, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw outputError(path, err, origin) ?? err;
  }
}

/**
 * Writes a file atomically: a temporary sibling is written and fsynced, then renamed over the
 * target, so a reader never sees half a file. `mode` 0o600 for anything holding key material.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  opts: { mode?: number; origin?: OutputOrigin } = {},
): Promise<void> {
  const origin = opts.origin ?? {};
  const dir = dirname(path);
  await at(path, origin, () => mkdir(dir, { recursive: true }));
  const tmp = join(dir, `.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await at(path, origin, () => open(tmp, 'wx', opts.mode ?? 0o644));
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
    throw outputError(path, err, origin) ?? err;
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
  opts: { force?: boolean; origin?: OutputOrigin } = {},
): Promise<void> {
  const origin = opts.origin ?? {};
  const parent = dirname(target);
  await at(target, origin, () => mkdir(parent, { recursive: true }));
  const tmp = join(parent, `.${randomBytes(6).toString('hex')}.ferry-tmp`);
  await at(target, origin, () => mkdir(tmp, { mode: 0o700 }));
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
      throw usageError(`${target} already exists`, 'choose another output directory or pass --force');
    }
    const old = `${tmp}.old`;
    await at(target, origin, () => rename(target, old));
    await rename(tmp, target);
    await rm(old, { recursive: true, force: true });
    return;
  }
  try {
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw outputError(target, err, origin) ?? err;
  }
}
