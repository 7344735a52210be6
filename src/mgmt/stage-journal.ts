/**
 * The stage journal of `ferry mgmt bootstrap` and of `ferry mgmt restore` into kind: an
 * append-only SQLite file (better-sqlite3, synchronous, WAL,
 * synchronous=FULL, as src/run/journal.ts) in the state directory. Each stage transition is
 * committed before the stage's work starts, so a SIGKILL leaves "started" on disk and the next run
 * continues at that stage. Tool output lines are stored with secrets already masked.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';

export type StageState = 'started' | 'done' | 'failed';

export interface StageEvent<K extends string = string> {
  seq: number;
  runId: number;
  stage: K;
  state: StageState;
  detail: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY AUTOINCREMENT, started_at TEXT NOT NULL, pid INTEGER NOT NULL, config_digest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stages (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, stage TEXT NOT NULL, state TEXT NOT NULL, at TEXT NOT NULL, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS output (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, stage TEXT NOT NULL, tool TEXT NOT NULL, stream TEXT NOT NULL, line TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS stages_no_update BEFORE UPDATE ON stages BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS stages_no_delete BEFORE DELETE ON stages BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
`;

/** One command's stage journal (K: its stage kinds). */
export class StageJournal<K extends string> {
  private readonly db: Database.Database;
  readonly runId: number;

  private constructor(db: Database.Database, runId: number) {
    this.db = db;
    this.runId = runId;
  }

  /** Opens (or creates) the journal and records a new run of it. */
  static open<K extends string>(path: string, configDigest: string): StageJournal<K> {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(SCHEMA);
    const r = db
      .prepare('INSERT INTO runs (started_at, pid, config_digest) VALUES (?, ?, ?)')
      .run(new Date().toISOString(), process.pid, configDigest);
    return new StageJournal<K>(db, Number(r.lastInsertRowid));
  }

  /** The digest {@link stagesDigest} would answer, read without recording a run; undefined without a journal. */
  static peekDigest(path: string): string | undefined {
    if (!existsSync(path)) return undefined;
    const db = new Database(path, { readonly: true });
    try {
      const r = db
        .prepare(
          'SELECT r.config_digest AS d FROM runs r WHERE EXISTS (SELECT 1 FROM stages s WHERE s.run_id = r.id) ORDER BY r.id DESC LIMIT 1',
        )
        .get() as { d: string } | undefined;
      return r?.d;
    } finally {
      db.close();
    }
  }

  /** Read-only view for tests and status. */
  static read(path: string): {
    events: StageEvent[];
    output: { stage: string; tool: string; line: string }[];
    digests: string[];
  } {
    const db = new Database(path, { readonly: true });
    try {
      const events = db
        .prepare('SELECT seq, run_id AS runId, stage, state, detail FROM stages ORDER BY seq')
        .all() as StageEvent[];
      const output = db.prepare('SELECT stage, tool, line FROM output ORDER BY seq').all() as {
        stage: string;
        tool: string;
        line: string;
      }[];
      const digests = (
        db.prepare('SELECT config_digest AS d FROM runs ORDER BY id').all() as { d: string }[]
      ).map((r) => r.d);
      return { events, output, digests };
    } finally {
      db.close();
    }
  }

  /**
   * The config digest of the last run that started a stage; undefined when none did (a run that
   * stopped in the preflight commits to nothing, so its config may still change freely).
   */
  stagesDigest(): string | undefined {
    const r = this.db
      .prepare(
        'SELECT r.config_digest AS d FROM runs r WHERE EXISTS (SELECT 1 FROM stages s WHERE s.run_id = r.id) ORDER BY r.id DESC LIMIT 1',
      )
      .get() as { d: string } | undefined;
    return r?.d;
  }

  record(stage: K, state: StageState, detail = ''): void {
    this.db
      .prepare('INSERT INTO stages (run_id, stage, state, at, detail) VALUES (?, ?, ?, ?, ?)')
      .run(this.runId, stage, state, new Date().toISOString(), detail);
  }

  line(stage: K | 'preflight', tool: string, stream: string, line: string): void {
    this.db
      .prepare('INSERT INTO output (run_id, stage, tool, stream, line) VALUES (?, ?, ?, ?, ?)')
      .run(this.runId, stage, tool, stream, line);
  }

  /** The last state of each stage over all runs. */
  lastStates(): Map<K, StageState> {
    const rows = this.db.prepare('SELECT stage, state FROM stages ORDER BY seq').all() as {
      stage: K;
      state: StageState;
    }[];
    const out = new Map<K, StageState>();
    for (const r of rows) out.set(r.stage, r.state);
    return out;
  }

  close(): void {
    this.db.close();
  }
}
