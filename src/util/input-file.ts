/**
 * Reading the files and directories a user hands ferry (flags, snapshot parts, plans, kits). Every
 * reader goes through here so that a path that cannot be used is an input error (exit 2) saying
 * what the path *is*: missing, a directory where a file is expected (or the reverse), a dangling
 * symbolic link, a symbolic link loop, unreadable for lack of permission, or something else, with
 * the flag that named it. A raw ENOENT never reaches the user as an internal error.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, type Stats, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { inputError, type Location } from '../errors.js';

/** What is wrong with a path, once a read or stat of it failed or found the wrong kind. */
export type PathProblem =
  | { kind: 'missing' }
  | { kind: 'directory' }
  | { kind: 'not-a-directory' }
  | { kind: 'special'; what: string }
  | { kind: 'dangling-symlink'; target: string }
  | { kind: 'symlink-loop' }
  | { kind: 'permission-denied' }
  | { kind: 'other'; message: string };

/** Who named the path, for messages: the flag (`--etcd-cacert`) and/or what it is ("the plan"). */
export interface PathOrigin {
  /** The path as the user gave it (messages quote it); default the path read. */
  shown?: string;
  flag?: string;
  /** A noun phrase, e.g. "the plan", "kubeconfig"; used when there is no flag. */
  what?: string;
  /** How to give a usable path, e.g. "pass --etcd-cacert the etcd CA (kubeadm: pki/etcd/ca.crt)". */
  provide: string;
}

type Expect = 'file' | 'directory';

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * The problem behind a failed stat/read of `path`. ENOENT is told apart from a dangling symbolic
 * link (the link exists, its target does not) with an lstat, done only on this error path.
 */
export function problemOf(path: string, err: unknown): PathProblem {
  switch (code(err)) {
    case 'ENOENT':
    case 'ENOTDIR': {
      let link: Stats | undefined;
      try {
        link = lstatSync(path);
      } catch {
        return { kind: 'missing' };
      }
      if (link.isSymbolicLink()) {
        let target = '?';
        try {
          target = readlinkSync(path);
        } catch {
          // The link vanished meanwhile: still a dangling link as far as the user is concerned.
        }
        return { kind: 'dangling-symlink', target };
      }
      return { kind: 'missing' };
    }
    case 'ELOOP':
      return { kind: 'symlink-loop' };
    case 'EACCES':
    case 'EPERM':
      return { kind: 'permission-denied' };
    case 'EISDIR':
      return { kind: 'directory' };
    default:
      return { kind: 'other', message: (err as Error | undefined)?.message ?? String(err) };
  }
}

/** The problem with what a successful stat found, or undefined when it is the kind expected. */
function kindProblem(st: Stats, expect: Expect): PathProblem | undefined {
  if (expect === 'directory') return st.isDirectory() ? undefined : { kind: 'not-a-directory' };
  if (st.isDirectory()) return { kind: 'directory' };
  // Pipes and character devices read fine (`--log <(journalctl …)`, `--suppressions /dev/null`).
  if (st.isSocket()) return { kind: 'special', what: 'socket' };
  return undefined;
}

/** The input error for a path that cannot be used, naming the flag, the path and what it is. */
export function pathError(path: string, problem: PathProblem, origin: PathOrigin, cause?: unknown) {
  const shown = origin.shown ?? path;
  const subject = origin.flag ? `${origin.flag} ${shown}` : origin.what ? `${origin.what} ${shown}` : shown;
  const loc: Location = { file: shown };
  if (origin.flag) loc.field = origin.flag;
  const provide = origin.provide;
  switch (problem.kind) {
    case 'missing':
      return inputError(`${subject} does not exist`, loc, provide, cause);
    case 'directory':
      return inputError(
        `${subject} is a directory, not a file`,
        loc,
        `name the file itself, not a directory; ${provide}`,
        cause,
      );
    case 'not-a-directory':
      return inputError(`${subject} is not a directory`, loc, provide, cause);
    case 'special':
      return inputError(`${subject} is a ${problem.what}, not a regular file`, loc, provide, cause);
    case 'dangling-symlink':
      return inputError(
        `${subject} is a symbolic link to ${problem.target}, which does not exist`,
        loc,
        `fix the link or replace it with the file it should point to; ${provide}`,
        cause,
      );
    case 'symlink-loop':
      return inputError(
        `${subject} is a symbolic link loop (following it never reaches a file)`,
        loc,
        `replace the link with the file it should point to; ${provide}`,
        cause,
      );
    case 'permission-denied':
      return inputError(
        `${subject} cannot be read: permission denied`,
        loc,
        'make it readable by the user running ferry (chmod/chown), or run ferry as a user who may read it',
        cause,
      );
    case 'other':
      return inputError(`${subject} cannot be read: ${problem.message}`, loc, provide, cause);
  }
}

async function requireKind(path: string, expect: Expect, origin: PathOrigin): Promise<void> {
  let st: Stats;
  try {
    st = await stat(path);
  } catch (err) {
    throw pathError(path, problemOf(path, err), origin, err);
  }
  const p = kindProblem(st, expect);
  if (p) throw pathError(path, p, origin);
}

/**
 * The text of a file, or what is wrong with the path: for readers that record a bad file and go
 * on (the PKI inventory) rather than stop.
 */
export async function readTextOrProblem(
  path: string,
  encoding: BufferEncoding = 'utf8',
): Promise<{ text: string } | { problem: PathProblem; cause?: unknown }> {
  // stat first: EISDIR is not what every platform reports, and the message should say what the path is.
  let st: Stats;
  try {
    st = await stat(path);
  } catch (err) {
    return { problem: problemOf(path, err), cause: err };
  }
  const p = kindProblem(st, 'file');
  if (p) return { problem: p };
  try {
    return { text: await readFile(path, encoding) };
  } catch (err) {
    return { problem: problemOf(path, err), cause: err };
  }
}

/** The text of a file; any other state of the path is an input error saying what it is. */
export async function readTextFile(
  path: string,
  origin: PathOrigin,
  encoding: BufferEncoding = 'utf8',
): Promise<string> {
  const r = await readTextOrProblem(path, encoding);
  if ('problem' in r) throw pathError(path, r.problem, origin, r.cause);
  return r.text;
}

/** The text of a file, or undefined when nothing is at the path; a path in any other state is an error. */
export async function readOptionalTextFile(path: string, origin: PathOrigin): Promise<string | undefined> {
  return (await pathState(path, 'file', origin)) === 'absent' ? undefined : readTextFile(path, origin);
}

/** Throws unless `path` is a regular file (following symbolic links), synchronously. */
export function requireFileSync(path: string, origin: PathOrigin): void {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (err) {
    throw pathError(path, problemOf(path, err), origin, err);
  }
  const p = kindProblem(st, 'file');
  if (p) throw pathError(path, p, origin);
}

/** The bytes of a file, synchronously (TLS material read while wiring adapters). */
export function readFileBytesSync(path: string, origin: PathOrigin): Buffer {
  requireFileSync(path, origin);
  try {
    return readFileSync(path);
  } catch (err) {
    throw pathError(path, problemOf(path, err), origin, err);
  }
}

/** Throws unless `path` is a directory (following symbolic links). */
export async function requireDirectory(path: string, origin: PathOrigin): Promise<void> {
  await requireKind(path, 'directory', origin);
}

/** Synchronous requireDirectory, for checks made while wiring adapters. */
export function requireDirectorySync(path: string, origin: PathOrigin): void {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (err) {
    throw pathError(path, problemOf(path, err), origin, err);
  }
  const p = kindProblem(st, 'directory');
  if (p) throw pathError(path, p, origin);
  try {
    readdirSync(path);
  } catch (err) {
    throw pathError(path, problemOf(path, err), origin, err);
  }
}

/**
 * Whether an optional part is there: 'present' when the path is the kind expected, 'absent' when
 * nothing is at the path. Anything else (a directory where a file belongs, a dangling link, a loop,
 * no permission) is an input error, never silently "absent".
 */
export async function pathState(
  path: string,
  expect: Expect,
  origin: PathOrigin,
): Promise<'present' | 'absent'> {
  let st: Stats;
  try {
    st = await stat(path);
  } catch (err) {
    const p = problemOf(path, err);
    if (p.kind === 'missing') return 'absent';
    throw pathError(path, p, origin, err);
  }
  const p = kindProblem(st, expect);
  if (p) throw pathError(path, p, origin);
  return 'present';
}

/**
 * Why a file read as text is not text, or undefined when it is: a NUL byte (a binary, a core dump)
 * or gzip's magic bytes (a rotated log still compressed). Looks at the first 64 KiB only: a log
 * with a stray control character further on is still a log worth scanning.
 */
export function notText(text: string): string | undefined {
  const head = text.slice(0, 65_536);
  if (head.startsWith('\u001f\uFFFD')) return 'it is gzip-compressed (a rotated log?)';
  const nul = head.indexOf('\0');
  if (nul >= 0) return `it holds a NUL byte at character ${nul + 1}, so it is binary, not a log`;
  return undefined;
}
