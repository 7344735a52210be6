import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rejected } from '../testing-errors.js';
import {
  pathError,
  pathState,
  problemOf,
  readFileBytesSync,
  readOptionalTextFile,
  readTextFile,
  requireDirectory,
  requireDirectorySync,
} from './input-file.js';

const dir = mkdtempSync(join(tmpdir(), 'ferry-input-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = join(dir, 'file.txt');
writeFileSync(file, 'hello');
const sub = join(dir, 'sub');
mkdirSync(sub);
const dangling = join(dir, 'dangling');
symlinkSync(join(dir, 'nowhere'), dangling);
const loopA = join(dir, 'loop-a');
const loopB = join(dir, 'loop-b');
symlinkSync(loopB, loopA);
symlinkSync(loopA, loopB);
const linkToFile = join(dir, 'link-to-file');
symlinkSync(file, linkToFile);
const missing = join(dir, 'missing.txt');

const origin = { flag: '--thing', provide: 'pass --thing a readable file' };

describe('readTextFile', () => {
  it('reads a file, and a symbolic link to one', async () => {
    expect(await readTextFile(file, origin)).toBe('hello');
    expect(await readTextFile(linkToFile, origin)).toBe('hello');
  });

  it.each([
    ['missing', missing, 'does not exist'],
    ['a directory', sub, 'is a directory, not a file'],
    [
      'a dangling symbolic link',
      dangling,
      `is a symbolic link to ${join(dir, 'nowhere')}, which does not exist`,
    ],
    ['a symbolic link loop', loopA, 'is a symbolic link loop'],
  ])('%s is an input error naming the flag and the path', async (_what, path, says) => {
    const err = await rejected(readTextFile(path, { ...origin, shown: 'as/typed' }));
    expect(err.exitCode).toBe(2);
    expect(err.message).toBe(
      `--thing as/typed ${says}${says.includes('loop') ? ' (following it never reaches a file)' : ''}`,
    );
    expect(err.location).toEqual({ file: 'as/typed', field: '--thing' });
  });

  it('says what the path is for when no flag named it', async () => {
    const err = await rejected(readTextFile(missing, { what: 'the plan', provide: 'x' }));
    expect(err.message).toBe(`the plan ${missing} does not exist`);
    expect(err.location).toEqual({ file: missing });
  });

  it('never tells the user to fix permissions for a dangling link or a loop', async () => {
    for (const p of [dangling, loopA]) {
      const err = await rejected(readTextFile(p, { flag: '--thing', provide: 'pass --thing the CA' }));
      expect(err.remediation).not.toMatch(/permission|chmod|readable/);
    }
  });
});

describe('problemOf', () => {
  it('tells permission denied from the rest (as root a real EACCES cannot be made)', () => {
    const eacces = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    expect(problemOf(file, eacces)).toEqual({ kind: 'permission-denied' });
    const err = pathError(file, { kind: 'permission-denied' }, origin, eacces);
    expect(err.message).toBe(`--thing ${file} cannot be read: permission denied`);
    expect(err.remediation).toMatch(/chmod/);
  });

  it('ENOENT on a path that is a symbolic link is a dangling link, otherwise missing', () => {
    const enoent = Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    expect(problemOf(dangling, enoent)).toEqual({ kind: 'dangling-symlink', target: join(dir, 'nowhere') });
    expect(problemOf(missing, enoent)).toEqual({ kind: 'missing' });
    expect(problemOf(file, Object.assign(new Error('boom'), { code: 'EIO' }))).toEqual({
      kind: 'other',
      message: 'boom',
    });
  });
});

describe('readOptionalTextFile and pathState', () => {
  it('is undefined only when nothing is at the path', async () => {
    expect(await readOptionalTextFile(missing, origin)).toBeUndefined();
    expect(await readOptionalTextFile(file, origin)).toBe('hello');
    for (const p of [sub, dangling, loopA]) await rejected(readOptionalTextFile(p, origin));
  });

  it('reports a file where a directory is expected, and the reverse', async () => {
    expect(await pathState(sub, 'directory', origin)).toBe('present');
    expect(await pathState(missing, 'directory', origin)).toBe('absent');
    expect((await rejected(pathState(file, 'directory', origin))).message).toMatch(/is not a directory$/);
    expect((await rejected(pathState(sub, 'file', origin))).message).toMatch(/is a directory, not a file$/);
  });
});

describe('directories and synchronous reads', () => {
  it('requireDirectory accepts a directory only', async () => {
    await requireDirectory(sub, origin);
    requireDirectorySync(sub, origin);
    expect((await rejected(requireDirectory(file, origin))).message).toMatch(/is not a directory/);
    expect(() => requireDirectorySync(dangling, origin)).toThrow(/symbolic link to/);
  });

  it('readFileBytesSync reads a file and refuses the rest the same way', () => {
    expect(readFileBytesSync(file, origin).toString()).toBe('hello');
    expect(() => readFileBytesSync(missing, origin)).toThrow(`--thing ${missing} does not exist`);
    expect(() => readFileBytesSync(sub, origin)).toThrow(/is a directory, not a file/);
    expect(() => readFileBytesSync(loopA, origin)).toThrow(/symbolic link loop/);
  });
});
