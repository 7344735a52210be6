/**
 * The run journal: an append-only SQLite record (better-sqlite3, synchronous) of every step
 * transition, beside the plan. `ferry run --resume` reads it to find the step in flight; tests read
 * it to prove that no destructive action ran twice.
 *
 * Tables (rows are never updated nor deleted: triggers refuse it):
 * - `runs`          one row per `ferry run` invocation (a resume is a new run of the same lineage);
 * - `steps`         the plan's steps, catalogued once per plan digest;
 * - `attempts`      step transitions: started → gate-passed → action-started → action-done → done,
 *                   or skipped / already-done / stopped / failed; and run-level ends (`step_id` '');
 * - `observations`  what the run saw: gates, verifications, resume checks, cordon state before a
 *                   step, bindings of Talos replacements to real names, probe summaries.
 *
 * Every insert is its own committed transaction before the action it announces starts
 * (synchronous=FULL, WAL): a SIGKILL after `action-started` leaves that row on disk.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import Database from 'better-sqlite3';
import { FerryError } from '../errors.js';
import { requireFileSync } from '../util/input-file.js';

export type StepTransition =
  | 'started'
  | 'skipped'
  | 'gate-passed'
  | 'action-started'
  | 'action-done'
  | 'done'
  | 'already-done'
  | 'stopped'
  | 'failed';

/** A step whose last transition is one of these is finished for good. */
export const FINISHED: ReadonlySet<StepTransition> = new Set(['done', 'already-done', 'skipped']);
/** ... and one of these means it stopped (resumable). */
export const HALTED: ReadonlySet<StepTransition> = new Set(['stopped', 'failed']);

export type RunEnd = 'completed' | 'stopped' | 'failed';

export type ObservationPurpose =
  | 'gate'
  | 'verify'
  | 'resume'
  | 'condition'
  | 'cordon-before'
  | 'cordon-restored'
  | 'replicas-restored'
  /** A GitOps owner a stopped run resumed (resumed: true) or left paused because resuming would revert the run's changes. */
  | 'gitops-given-back'
  /** What a drain did, node by node (drain-nodes.ts DrainEvent): a resumed drain never evicts a pod twice. */
  | 'drain-progress'
  | 'binding'
  | 'probe'
  /** A health signal (Alertmanager, an operator probe) that was not clear at a gate. */
  | 'signal'
  /** A silence made for a step's expected alerts, and its end. */
  | 'silence'
  | 'note';

export interface RunRow {
  runId: string;
  lineage: string;
  planFile: string;
  planDigest: string;
  pid: number;
  host: string;
  startedAt: string;
  resumedFrom: string | null;
}

export interface TransitionRow {
  seq: number;
  runId: string;
  stepId: string;
  attempt: number;
  state: StepTransition | RunEnd;
  at: string;
  detail: unknown;
}

export interface ObservationRow {
  seq: number;
  runId: string;
  stepId: string | null;
  purpose: ObservationPurpose;
  at: string;
  ok: boolean | null;
  data: unknown;
}

export interface CatalogStep {
  id: string;
  position: number;
  kind: string;
  subject: string;
  destructive: boolean;
  title: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, lineage TEXT NOT NULL, plan_file TEXT NOT NULL, plan_digest TEXT NOT NULL,
  pid INTEGER NOT NULL, host TEXT NOT NULL, started_at TEXT NOT NULL, resumed_from TEXT
);
CREATE TABLE IF NOT EXISTS steps (
  plan_digest TEXT NOT NULL, step_id TEXT NOT NULL, position INTEGER NOT NULL, kind TEXT NOT NULL,
  subject TEXT NOT NULL, destructive INTEGER NOT NULL, title TEXT NOT NULL,
  PRIMARY KEY (plan_digest, step_id)
);
CREATE TABLE IF NOT EXISTS attempts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES runs(run_id),
  step_id TEXT NOT NULL, attempt INTEGER NOT NULL, state TEXT NOT NULL, at TEXT NOT NULL, detail TEXT
);
CREATE INDEX IF NOT EXISTS attempts_step ON attempts(step_id, seq);
CREATE TABLE IF NOT EXISTS observations (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES runs(run_id),
  step_id TEXT, purpose TEXT NOT NULL, at TEXT NOT NULL, ok INTEGER, data TEXT
);
CREATE INDEX IF NOT EXISTS observations_step ON observations(step_id, purpose, seq);
`;

const APPEND_ONLY = ['runs', 'steps', 'attempts', 'observations']
  .flatMap((t) => [
    `CREATE TRIGGER IF NOT EXISTS ${t}_no_update BEFORE UPDATE ON ${t} BEGIN SELECT RAISE(ABORT, 'the ferry journal is append-only'); END;`,
    `CREATE TRIGGER IF NOT EXISTS ${t}_no_delete BEFORE DELETE ON ${t} BEGIN SELECT RAISE(ABORT, 'the ferry journal is append-only'); END;`,
  ])
  .join('\n');

const SCHEMA_VERSION = '1';

/** `plan.json` → `plan.journal.sqlite` in the same directory. */
export function journalPathFor(planFile: string): string {
  const base = basename(planFile, extname(planFile));
  return join(dirname(planFile), `${base}.journal.sqlite`);
}

function json(v: unknown): string | null {
  return v === undefined ? null : JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
}

function parse(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}

export class Journal {
  readonly file: string;
  readonly #db: Database.Database;
  #runId: string | undefined;
  #now: () => Date;

  private constructor(file: string, db: Database.Database, now: () => Date) {
    this.file = file;
    this.#db = db;
    this.#now = now;
  }

  /**
   * Opens (creating if needed) the journal database. `busyTimeoutMs`: how long a call waits,
   * blocking the thread, for another process's lock (default 5 s). A reader beside a live run that
   * must not stall its own event loop passes 0 and retries on SQLITE_BUSY.
   */
  static open(
    file: string,
    opts: { now?: () => Date; readonly?: boolean; busyTimeoutMs?: number } = {},
  ): Journal {
    // Something in the journal's place (a directory, a dangling link) is named as what it is; a
    // journal that is not there yet is created (readonly: must exist).
    if (opts.readonly || lstatSync(file, { throwIfNoEntry: false }))
      requireFileSync(file, {
        what: 'the run journal',
        provide: 'the journal lives beside the plan (PLAN.journal.sqlite): move what is in its place away',
      });
    const readonly = opts.readonly ?? false;
    const db = connect(file, { readonly, mustExist: readonly, busyTimeoutMs: opts.busyTimeoutMs });
    try {
      const found = contentOf(db, file);
      if (!readonly) {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = FULL');
        db.exec(SCHEMA);
        db.exec(APPEND_ONLY);
        db.prepare('INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)').run('schema', SCHEMA_VERSION);
        db.prepare('INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)').run('lineage', randomUUID());
      } else if (found === 'nothing') {
        throw notAJournal(file, 'it holds no tables');
      }
      checkSchema(db, file);
    } catch (err) {
      db.close();
      throw asJournalError(file, err);
    }
    return new Journal(file, db, opts.now ?? (() => new Date()));
  }

  /**
   * The digest of the plan a journal already on disk was made for (undefined when it has no run
   * yet), or undefined when there is no journal: the checks a run makes of its journal, made
   * without starting one and without writing (`ferry run --dry-run`).
   */
  static peek(file: string): { planDigest: string | undefined } | undefined {
    if (!existsSync(file)) return undefined;
    // Read-write, though only read: SQLite removes the -wal and -shm files it makes when the last
    // connection closes; a read-only connection to a WAL database leaves them behind.
    const db = connect(file, { readonly: false, mustExist: true, busyTimeoutMs: undefined });
    try {
      if (contentOf(db, file) === 'nothing') return { planDigest: undefined };
      checkSchema(db, file);
      return { planDigest: firstPlanDigest(db) };
    } catch (err) {
      throw asJournalError(file, err);
    } finally {
      db.close();
    }
  }

  /** Identifies every run of this journal (the Lease holder identity is derived from it). */
  get lineage(): string {
    return (this.#db.prepare('SELECT value FROM meta WHERE key = ?').get('lineage') as { value: string })
      .value;
  }

  get runId(): string {
    if (!this.#runId) throw new Error('journal: no run begun');
    return this.#runId;
  }

  #at(): string {
    return this.#now().toISOString();
  }

  /** The plan's digest the journal's runs were made for, if any run exists. */
  planDigest(): string | undefined {
    return firstPlanDigest(this.#db);
  }

  runs(): RunRow[] {
    return (this.#db.prepare('SELECT * FROM runs ORDER BY rowid').all() as Record<string, unknown>[]).map(
      (r) => ({
        runId: r['run_id'] as string,
        lineage: r['lineage'] as string,
        planFile: r['plan_file'] as string,
        planDigest: r['plan_digest'] as string,
        pid: r['pid'] as number,
        host: r['host'] as string,
        startedAt: r['started_at'] as string,
        resumedFrom: (r['resumed_from'] as string | null) ?? null,
      }),
    );
  }

  /** Starts a run: catalogues the plan's steps (once per digest) and records the invocation. */
  beginRun(opts: {
    planFile: string;
    planDigest: string;
    steps: CatalogStep[];
    resumedFrom?: string;
    runId?: string;
  }): string {
    const runId = opts.runId ?? randomUUID();
    const insertStep = this.#db.prepare(
      'INSERT OR IGNORE INTO steps(plan_digest, step_id, position, kind, subject, destructive, title) VALUES (?,?,?,?,?,?,?)',
    );
    this.#db.transaction(() => {
      for (const s of opts.steps)
        insertStep.run(opts.planDigest, s.id, s.position, s.kind, s.subject, s.destructive ? 1 : 0, s.title);
      this.#db
        .prepare(
          'INSERT INTO runs(run_id, lineage, plan_file, plan_digest, pid, host, started_at, resumed_from) VALUES (?,?,?,?,?,?,?,?)',
        )
        .run(
          runId,
          this.lineage,
          opts.planFile,
          opts.planDigest,
          process.pid,
          hostname(),
          this.#at(),
          opts.resumedFrom ?? null,
        );
    })();
    this.#runId = runId;
    return runId;
  }

  /** Next attempt number of a step across all runs of this journal. */
  nextAttempt(stepId: string): number {
    const r = this.#db
      .prepare("SELECT MAX(attempt) AS n FROM attempts WHERE step_id = ? AND state = 'started'")
      .get(stepId) as { n: number | null };
    return (r.n ?? 0) + 1;
  }

  transition(stepId: string, attempt: number, state: StepTransition, detail?: unknown): void {
    this.#db
      .prepare('INSERT INTO attempts(run_id, step_id, attempt, state, at, detail) VALUES (?,?,?,?,?,?)')
      .run(this.runId, stepId, attempt, state, this.#at(), json(detail));
  }

  endRun(end: RunEnd, detail?: unknown): void {
    this.#db
      .prepare('INSERT INTO attempts(run_id, step_id, attempt, state, at, detail) VALUES (?,?,?,?,?,?)')
      .run(this.runId, '', 0, end, this.#at(), json(detail));
  }

  observe(stepId: string | null, purpose: ObservationPurpose, ok: boolean | null, data: unknown): void {
    this.#db
      .prepare('INSERT INTO observations(run_id, step_id, purpose, at, ok, data) VALUES (?,?,?,?,?,?)')
      .run(this.runId, stepId, purpose, this.#at(), ok === null ? null : ok ? 1 : 0, json(data));
  }

  // ---- reading ---------------------------------------------------------------------------------

  transitions(stepId?: string): TransitionRow[] {
    const rows = (
      stepId === undefined
        ? this.#db.prepare("SELECT * FROM attempts WHERE step_id <> '' ORDER BY seq").all()
        : this.#db.prepare('SELECT * FROM attempts WHERE step_id = ? ORDER BY seq').all(stepId)
    ) as Record<string, unknown>[];
    return rows.map(toTransition);
  }

  /** Run-level ends, oldest first. */
  runEnds(): TransitionRow[] {
    return (
      this.#db.prepare("SELECT * FROM attempts WHERE step_id = '' ORDER BY seq").all() as Record<
        string,
        unknown
      >[]
    ).map(toTransition);
  }

  observations(filter: { stepId?: string; purpose?: ObservationPurpose } = {}): ObservationRow[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.stepId !== undefined) {
      where.push('step_id = ?');
      args.push(filter.stepId);
    }
    if (filter.purpose !== undefined) {
      where.push('purpose = ?');
      args.push(filter.purpose);
    }
    const sql = `SELECT * FROM observations${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq`;
    return (this.#db.prepare(sql).all(...args) as Record<string, unknown>[]).map((r) => ({
      seq: r['seq'] as number,
      runId: r['run_id'] as string,
      stepId: (r['step_id'] as string | null) ?? null,
      purpose: r['purpose'] as ObservationPurpose,
      at: r['at'] as string,
      ok: r['ok'] === null ? null : r['ok'] === 1,
      data: parse(r['data'] as string | null),
    }));
  }

  /** The last transition of each step that has one. */
  lastStates(): Map<string, TransitionRow> {
    const out = new Map<string, TransitionRow>();
    for (const t of this.transitions()) out.set(t.stepId, t);
    return out;
  }

  /** How many times the action of a step was started, over all runs: the "never twice" proof. */
  actionCount(stepId: string): number {
    const r = this.#db
      .prepare("SELECT COUNT(*) AS n FROM attempts WHERE step_id = ? AND state = 'action-started'")
      .get(stepId) as { n: number };
    return r.n;
  }

  /** The catalogue of steps for a plan digest, in plan order. */
  catalog(planDigest: string): CatalogStep[] {
    return (
      this.#db
        .prepare('SELECT * FROM steps WHERE plan_digest = ? ORDER BY position')
        .all(planDigest) as Record<string, unknown>[]
    ).map((r) => ({
      id: r['step_id'] as string,
      position: r['position'] as number,
      kind: r['kind'] as string,
      subject: r['subject'] as string,
      destructive: r['destructive'] === 1,
      title: r['title'] as string,
    }));
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}

function connect(
  file: string,
  o: { readonly: boolean; mustExist: boolean; busyTimeoutMs: number | undefined },
): Database.Database {
  try {
    return new Database(file, {
      readonly: o.readonly,
      fileMustExist: o.mustExist,
      timeout: o.busyTimeoutMs ?? 5_000,
    });
  } catch (err) {
    throw new FerryError('input', `cannot open the run journal ${file}: ${(err as Error).message}`, {
      location: { file },
      remediation: 'check the directory of the plan is writable (the journal lives beside the plan)',
      cause: err,
    });
  }
}

/**
 * What the database holds: `nothing` (a new or empty file, which a run makes its journal) or a
 * ferry journal. Another SQLite database is refused before ferry adds its tables to it; a file
 * that is not a database fails the query (asJournalError).
 */
function contentOf(db: Database.Database, file: string): 'nothing' | 'journal' {
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
  ).map((t) => t.name);
  if (tables.length === 0) return 'nothing';
  if (!tables.includes('meta') || !tables.includes('runs'))
    throw notAJournal(file, 'it is an SQLite database without the tables of a ferry journal');
  return 'journal';
}

function checkSchema(db: Database.Database, file: string): void {
  const schema = (
    db.prepare('SELECT value FROM meta WHERE key = ?').get('schema') as { value: string } | undefined
  )?.value;
  if (schema !== SCHEMA_VERSION) {
    throw new FerryError(
      'input',
      `the run journal ${file} has schema ${schema ?? 'none'}, not ${SCHEMA_VERSION}`,
      {
        location: { file },
        remediation: 'use the ferry version that wrote it, or move the journal away to start a new run',
      },
    );
  }
}

function firstPlanDigest(db: Database.Database): string | undefined {
  const r = db.prepare('SELECT plan_digest FROM runs ORDER BY rowid LIMIT 1').get() as
    | { plan_digest: string }
    | undefined;
  return r?.plan_digest;
}

function notAJournal(file: string, why: string): FerryError {
  return new FerryError('input', `the run journal ${file} is not a ferry journal: ${why}`, {
    location: { file },
    remediation: `move it away (e.g. mv ${file} ${file}.bad) and run again: ferry starts a new journal beside the plan; if runs of this plan were made, put back the journal they wrote instead (ferry never deletes a journal)`,
  });
}

/** SQLite's "not a database" and "malformed" are bad input (the file beside the plan), not a ferry bug. */
function asJournalError(file: string, err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_NOTADB') return notAJournal(file, 'it is not an SQLite database');
  if (code === 'SQLITE_CORRUPT') return notAJournal(file, 'the SQLite database is damaged');
  return err;
}

function toTransition(r: Record<string, unknown>): TransitionRow {
  return {
    seq: r['seq'] as number,
    runId: r['run_id'] as string,
    stepId: r['step_id'] as string,
    attempt: r['attempt'] as number,
    state: r['state'] as StepTransition | RunEnd,
    at: r['at'] as string,
    detail: parse(r['detail'] as string | null),
  };
}
