import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { thrown } from '../testing-errors.js';
import { Journal, journalPathFor } from './journal.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-journal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const steps = [
  {
    id: '2.01.provision.cp-1',
    position: 1,
    kind: 'provision',
    subject: 'cp-1',
    destructive: false,
    title: 'boot',
  },
  {
    id: '2.02.etcd-remove-member.cp-1',
    position: 2,
    kind: 'etcd-remove-member',
    subject: 'cp-1',
    destructive: true,
    title: 'remove',
  },
];

describe('journal', () => {
  it('lives beside the plan', () => {
    expect(journalPathFor('/x/y/plan.json')).toBe('/x/y/plan.journal.sqlite');
  });

  it('a directory or a dangling link in the place of the journal is bad input saying so', async () => {
    const { mkdir, symlink } = await import('node:fs/promises');
    const inTheWay = join(dir, 'plan.journal.sqlite');
    await mkdir(inTheWay);
    expect(() => Journal.open(inTheWay)).toThrow(`the run journal ${inTheWay} is a directory, not a file`);
    const dangling = join(dir, 'other.journal.sqlite');
    await symlink(join(dir, 'gone.sqlite'), dangling);
    expect(() => Journal.open(dangling)).toThrow(
      /is a symbolic link to .*gone\.sqlite, which does not exist/,
    );
    // Not there yet: created.
    const fresh = Journal.open(join(dir, 'fresh.journal.sqlite'));
    fresh.close();
  });

  it('records transitions in order, keeps them across reopen, and counts action starts', () => {
    const file = join(dir, 'plan.journal.sqlite');
    const j = Journal.open(file);
    const run1 = j.beginRun({ planFile: 'plan.json', planDigest: 'd1', steps });
    j.transition(steps[0]!.id, 1, 'started');
    j.transition(steps[0]!.id, 1, 'action-started');
    j.transition(steps[0]!.id, 1, 'done');
    j.transition(steps[1]!.id, 1, 'started');
    j.transition(steps[1]!.id, 1, 'action-started', { id: '18446744073709551615' });
    j.observe(steps[1]!.id, 'gate', true, { voters: 4 });
    const lineage = j.lineage;
    j.close();

    const k = Journal.open(file);
    expect(k.lineage).toBe(lineage);
    expect(k.planDigest()).toBe('d1');
    expect(k.catalog('d1').map((s) => s.id)).toEqual(steps.map((s) => s.id));
    const last = k.lastStates();
    expect(last.get(steps[0]!.id)?.state).toBe('done');
    expect(last.get(steps[1]!.id)?.state).toBe('action-started');
    // uint64 ids survive as strings
    expect(last.get(steps[1]!.id)?.detail).toEqual({ id: '18446744073709551615' });
    expect(k.nextAttempt(steps[1]!.id)).toBe(2);
    const run2 = k.beginRun({ planFile: 'plan.json', planDigest: 'd1', steps, resumedFrom: run1 });
    k.transition(steps[1]!.id, 2, 'started');
    k.transition(steps[1]!.id, 2, 'already-done');
    k.endRun('completed');
    expect(k.actionCount(steps[1]!.id)).toBe(1);
    expect(k.runs().map((r) => r.resumedFrom)).toEqual([null, run1]);
    expect(k.runs()[1]!.runId).toBe(run2);
    expect(k.observations({ purpose: 'gate' })[0]).toMatchObject({ ok: true, data: { voters: 4 } });
    expect(k.runEnds().map((r) => r.state)).toEqual(['completed']);
    k.close();
  });

  it('refuses updates and deletes: the record is append-only', () => {
    const file = join(dir, 'j.sqlite');
    const j = Journal.open(file);
    j.beginRun({ planFile: 'p', planDigest: 'd', steps });
    j.transition(steps[0]!.id, 1, 'started');
    j.close();
    // Tamper from another process with the sqlite library itself.
    const script = `
      const D = require('better-sqlite3'); const db = new D(${JSON.stringify(file)});
      const out = [];
      for (const sql of ["UPDATE attempts SET state='done'", "DELETE FROM attempts", "DELETE FROM runs"]) {
        try { db.exec(sql); out.push('ok'); } catch (e) { out.push(e.message); }
      }
      console.log(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: process.cwd(), encoding: 'utf8' });
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as string[];
    expect(out).toEqual(Array(3).fill('the ferry journal is append-only'));
    const k = Journal.open(file);
    expect(k.transitions().map((t) => t.state)).toEqual(['started']);
    k.close();
  });

  it('survives a SIGKILL right after a transition (committed before returning)', () => {
    const file = join(dir, 'k.sqlite');
    const script = `
      import('${join(process.cwd(), 'src/run/journal.ts')}').then(({ Journal }) => {
        const j = Journal.open(${JSON.stringify(file)});
        j.beginRun({ planFile: 'p', planDigest: 'd', steps: [] });
        j.transition('s', 1, 'started');
        j.transition('s', 1, 'action-started');
        process.kill(process.pid, 'SIGKILL');
      });`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8' });
    expect(r.signal).toBe('SIGKILL');
    const j = Journal.open(file);
    expect(j.transitions('s').map((t) => t.state)).toEqual(['started', 'action-started']);
    j.close();
  });

  it('a file that is not a journal is bad input naming it and how to fix it, and is left as it was', async () => {
    const junk = join(dir, 'plan.journal.sqlite');
    await writeFile(junk, Buffer.from('\x89PNG\r\n\x1a\n this is not a database, nor a journal '.repeat(40)));
    const before = await readFile(junk);
    for (const open of [
      () => Journal.open(junk),
      () => Journal.open(junk, { readonly: true }),
      () => Journal.peek(junk),
    ]) {
      const err = thrown(open);
      expect(err.exitCode).toBe(2);
      expect(err.location).toEqual({ file: junk });
      expect(err.message).toBe(
        `the run journal ${junk} is not a ferry journal: it is not an SQLite database`,
      );
      expect(err.remediation).toContain(`mv ${junk} ${junk}.bad`);
      expect(err.remediation).toContain('ferry never deletes a journal');
    }
    expect((await readFile(junk)).equals(before)).toBe(true);
    expect(await readdir(dir)).toEqual(['plan.journal.sqlite']);
  });

  it('another SQLite database is refused before ferry adds its tables to it', async () => {
    const other = join(dir, 'plan.journal.sqlite');
    const db = new Database(other);
    db.exec('CREATE TABLE photos (id INTEGER PRIMARY KEY)');
    db.close();
    const before = await readFile(other);
    for (const open of [() => Journal.open(other), () => Journal.peek(other)]) {
      expect(thrown(open).message).toBe(
        `the run journal ${other} is not a ferry journal: it is an SQLite database without the tables of a ferry journal`,
      );
    }
    expect((await readFile(other)).equals(before)).toBe(true);
  });

  it('peek says what plan a journal was made for without writing: nothing beside it, no run begun', async () => {
    const file = join(dir, 'plan.journal.sqlite');
    expect(Journal.peek(file)).toBeUndefined();
    expect(await readdir(dir)).toEqual([]);
    const j = Journal.open(file);
    expect(Journal.peek(file)).toEqual({ planDigest: undefined });
    j.beginRun({ planFile: 'plan.json', planDigest: 'd1', steps });
    j.close();
    const before = await readFile(file);
    expect(Journal.peek(file)).toEqual({ planDigest: 'd1' });
    // A read-only connection would leave plan.journal.sqlite-wal and -shm behind.
    expect(await readdir(dir)).toEqual(['plan.journal.sqlite']);
    expect((await readFile(file)).equals(before)).toBe(true);
    await writeFile(join(dir, 'empty.sqlite'), '');
    expect(Journal.peek(join(dir, 'empty.sqlite'))).toEqual({ planDigest: undefined });
  });
});
