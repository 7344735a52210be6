import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rejected } from '../testing-errors.js';
import { writeDirAtomic, writeFileAtomic } from './atomic-write.js';

const dir = mkdtempSync(join(tmpdir(), 'ferry-atomic-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'a-file'), 'x');
mkdirSync(join(dir, 'a-dir'));

const failure = (p: Promise<unknown>) => rejected(p, 2);

describe('an output path that cannot be written is bad input naming the flag', () => {
  it('a parent that is a file', async () => {
    const err = await failure(
      writeFileAtomic(join(dir, 'a-file', 'out.json'), '{}', {
        origin: { flag: '--output-file', shown: 'x/out.json' },
      }),
    );
    expect(err.message).toBe(
      'cannot write --output-file x/out.json: a parent of it is a file, not a directory',
    );
    expect(err.location).toEqual({ file: 'x/out.json', field: '--output-file' });
    const dirErr = await failure(
      writeDirAtomic(join(dir, 'a-file', 'kit'), async () => {}, { origin: { flag: '--output' } }),
    );
    expect(dirErr.message).toBe(
      `cannot write --output ${join(dir, 'a-file', 'kit')}: a parent of it is a file, not a directory`,
    );
  });

  it('a directory where the file goes, leaving no temporary file behind', async () => {
    const err = await failure(writeFileAtomic(join(dir, 'a-dir'), '{}', { origin: { flag: '--report' } }));
    expect(err.message).toBe(`cannot write --report ${join(dir, 'a-dir')}: it is a directory`);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('writes when the path is fine', async () => {
    await writeFileAtomic(join(dir, 'new', 'out.json'), '{}');
    expect(readdirSync(join(dir, 'new'))).toEqual(['out.json']);
  });
});
