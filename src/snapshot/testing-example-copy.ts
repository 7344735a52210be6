/**
 * A throw-away copy of the bundled example snapshot (examples/lab-cluster), for tests that feed
 * ferry one malformed file: copy, edit one file, load, delete.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FerryError } from '../errors.js';
import { rejected } from '../testing-errors.js';
import { loadSnapshot } from './load.js';
import { EXAMPLE_DIR } from './testing-example.js';

export interface ExampleCopy {
  /** The copy's directory. */
  dir: string;
  path(rel: string): string;
  read(rel: string): Promise<string>;
  write(rel: string, text: string): Promise<void>;
  /** Replaces `from` by `to` in one file; fails when `from` is not there (the edit would be a no-op). */
  replace(rel: string, from: string | RegExp, to: string): Promise<void>;
  /** Parses a JSON file, lets `edit` change it, writes it back. */
  // biome-ignore lint/suspicious/noExplicitAny: a test reaches into whatever the JSON holds
  editJson(rel: string, edit: (doc: any) => void): Promise<void>;
  cleanup(): Promise<void>;
}

export async function copyExample(): Promise<ExampleCopy> {
  const root = await mkdtemp(join(tmpdir(), 'ferry-example-'));
  const dir = join(root, 'lab-cluster');
  await cp(EXAMPLE_DIR, dir, { recursive: true });
  const path = (rel: string) => join(dir, rel);
  const read = (rel: string) => readFile(path(rel), 'utf8');
  const write = (rel: string, text: string) => writeFile(path(rel), text);
  return {
    dir,
    path,
    read,
    write,
    async replace(rel, from, to) {
      const text = await read(rel);
      const next = text.replace(from, to);
      if (next === text) throw new Error(`copyExample: ${String(from)} is not in ${rel}`);
      await write(rel, next);
    },
    async editJson(rel, edit) {
      const doc = JSON.parse(await read(rel));
      edit(doc);
      await write(rel, JSON.stringify(doc, null, 2));
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** The input error (exit 2) loading the snapshot at `dir` stops with. */
export function loadError(dir: string): Promise<FerryError> {
  return rejected(loadSnapshot(dir, { strictPki: false }), 2);
}
