/**
 * A plan is a contract: `ferry run` executes the plan the operator reviewed, or nothing. buildPlan
 * seals a plan with its digest (sha256 of the canonical JSON of everything but `integrity`,
 * createdAt included) and fingerprints of its parts; the loader recomputes both from what it read.
 * When they differ, the fingerprints say what changed as far as they can tell: top-level fields,
 * phases, steps removed, added or moved, and for a changed step which of its fields (with the
 * value now, and the value before when a fingerprint gives it away, e.g. destructive true → false).
 */

import { isRecord as isObject } from '../util/walk.js';
import { digestOf } from './digest.js';
import { show } from './issues.js';
import type { Plan, PlanContent, PlanIntegrity, StepFingerprint } from './model.js';

/** Hex digits kept of a part's sha256: enough to tell parts apart, short enough to keep the record small. */
const FINGERPRINT_HEX = 12;

const PREFIX = 'sha256:'.length;

export function fingerprint(v: unknown): string {
  return digestOf(v).slice(PREFIX, PREFIX + FINGERPRINT_HEX);
}

/** Field → fingerprint, keys sorted (the canonical form does not depend on key order). */
function fieldPrints(o: unknown, skip?: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(o)) return out;
  for (const k of Object.keys(o).sort()) if (k !== skip && o[k] !== undefined) out[k] = fingerprint(o[k]);
  return out;
}

/** The integrity record of plan content; takes any JSON object (the loader runs it before the shape check). */
export function integrityOf(content: Record<string, unknown>): PlanIntegrity {
  const { integrity: _, ...rest } = content;
  const phases = Array.isArray(rest['phases']) ? (rest['phases'] as unknown[]) : [];
  const fields = fieldPrints(rest, 'phases');
  return {
    digest: digestOf(rest),
    fields,
    phases: phases.map((ph) => (isObject(ph) ? fingerprint({ ...ph, steps: undefined }) : fingerprint(ph))),
    steps: phases.flatMap((ph, i) =>
      isObject(ph) && Array.isArray(ph['steps'])
        ? (ph['steps'] as unknown[]).map(
            (s): StepFingerprint => ({
              id: isObject(s) && typeof s['id'] === 'string' ? s['id'] : '',
              phase: i,
              fields: fieldPrints(s),
            }),
          )
        : [],
    ),
  };
}

export function sealPlan(content: PlanContent): Plan {
  return { ...content, integrity: integrityOf(content as unknown as Record<string, unknown>) };
}

export interface Difference {
  /** Field path in the plan where to look, e.g. `phases[2].steps[11].destructive`. */
  path: string;
  message: string;
}

export interface Mismatch {
  /** Why the plan is refused, in one line. */
  summary: string;
  /** What differs: top-level fields, then phases, then steps; may be empty. */
  differences: Difference[];
}

/** Undefined when the plan is the one its integrity record describes. */
export function verifyIntegrity(doc: Record<string, unknown>): Mismatch | undefined {
  const { integrity: recorded, ...content } = doc;
  if (recorded === undefined)
    return {
      summary:
        'the plan has no integrity record (integrity.digest): it was written by an older ferry, or edited',
      differences: [],
    };
  if (!isIntegrity(recorded))
    return {
      summary: 'the integrity record of the plan is malformed: the plan was edited',
      differences: [{ path: 'integrity', message: 'integrity is not the record ferry plan writes' }],
    };
  const current = integrityOf(content);
  if (recorded.digest === current.digest) {
    if (digestOf(recorded) === digestOf(current)) return undefined;
    return {
      summary:
        "the plan's integrity record was edited: its fingerprints do not describe the content its digest matches",
      differences: [],
    };
  }
  const differences = compare(recorded, current, content);
  return {
    summary: 'the plan was changed after ferry plan wrote it: its content does not match integrity.digest',
    differences:
      differences.length > 0
        ? differences
        : [
            {
              path: 'integrity.digest',
              message: 'integrity.digest was changed (every part matches its fingerprint)',
            },
          ],
  };
}

function isIntegrity(v: unknown): v is PlanIntegrity {
  const prints = (x: unknown) => isObject(x) && Object.values(x).every((p) => typeof p === 'string');
  return (
    isObject(v) &&
    typeof v['digest'] === 'string' &&
    /^sha256:[0-9a-f]{64}$/.test(v['digest']) &&
    prints(v['fields']) &&
    Array.isArray(v['phases']) &&
    v['phases'].every((p) => typeof p === 'string') &&
    Array.isArray(v['steps']) &&
    v['steps'].every(
      (s) =>
        isObject(s) && typeof s['id'] === 'string' && typeof s['phase'] === 'number' && prints(s['fields']),
    )
  );
}

// ---- naming the differences -------------------------------------------------------------------

/** Each step's place: its index in its phase, and `phases[i].steps[j]`. */
function places(steps: StepFingerprint[]): { j: number; path: string }[] {
  const counts = new Map<number, number>();
  return steps.map((s) => {
    const j = counts.get(s.phase) ?? 0;
    counts.set(s.phase, j + 1);
    return { j, path: `phases[${s.phase}].steps[${j}]` };
  });
}

function compare(
  recorded: PlanIntegrity,
  current: PlanIntegrity,
  content: Record<string, unknown>,
): Difference[] {
  const out: Difference[] = [];
  for (const d of fieldChanges(recorded.fields, current.fields, (k) => content[k]))
    out.push({ path: d.field, message: `${d.field} changed${d.detail}` });
  if (recorded.phases.length !== current.phases.length)
    out.push({
      path: 'phases',
      message: `the plan had ${recorded.phases.length} phases, now ${current.phases.length}`,
    });
  current.phases.forEach((p, i) => {
    const r = recorded.phases[i];
    if (r !== undefined && r !== p)
      out.push({ path: `phases[${i}]`, message: `phases[${i}] changed (its id, name, title or summary)` });
  });
  out.push(...stepChanges(recorded.steps, current.steps, content));
  return out;
}

function stepChanges(
  recorded: StepFingerprint[],
  current: StepFingerprint[],
  content: Record<string, unknown>,
): Difference[] {
  const out: Difference[] = [];
  const rPlace = places(recorded);
  const cPlace = places(current);
  const rAt = rPlace.map((p) => p.path);
  const cAt = cPlace.map((p) => p.path);
  const label = (id: string) => (id ? `step ${id}` : 'a step without an id');
  const rIndex = new Map<string, number>();
  recorded.forEach((s, i) => {
    if (!rIndex.has(s.id)) rIndex.set(s.id, i);
  });
  const cIndex = new Map<string, number>();
  current.forEach((s, i) => {
    if (!cIndex.has(s.id)) cIndex.set(s.id, i);
  });

  recorded.forEach((s, i) => {
    if (rIndex.get(s.id) === i && !cIndex.has(s.id))
      out.push({ path: rAt[i]!, message: `${label(s.id)} removed (it was ${rAt[i]})` });
  });
  const common: number[] = [];
  current.forEach((s, i) => {
    if (cIndex.get(s.id) !== i || !rIndex.has(s.id)) {
      const again = cIndex.get(s.id) !== i ? `, a second step with id ${s.id}` : '';
      out.push({ path: cAt[i]!, message: `${label(s.id)} added at ${cAt[i]}${again}` });
    } else common.push(i);
  });

  // Steps in both: those off a longest run in the old order moved.
  const kept = longestIncreasing(common.map((i) => rIndex.get(current[i]!.id)!));
  common.forEach((i, k) => {
    const s = current[i]!;
    const r = rIndex.get(s.id)!;
    if (!kept.has(k)) {
      const before = (list: StepFingerprint[], n: number) => (n > 0 ? `after ${list[n - 1]!.id}` : 'first');
      out.push({
        path: cAt[i]!,
        message: `${label(s.id)} moved: now ${cAt[i]}, ${before(current, i)}; it was ${rAt[r]}, ${before(recorded, r)}`,
      });
    } else if (recorded[r]!.phase !== s.phase) {
      out.push({
        path: cAt[i]!,
        message: `${label(s.id)} moved from phase ${recorded[r]!.phase} to ${s.phase}`,
      });
    }
    const changes = fieldChanges(recorded[r]!.fields, s.fields, (f) =>
      valueAt(content, s.phase, cPlace[i]!.j, f),
    );
    if (changes.length > 0)
      out.push({
        path: `${cAt[i]}.${changes[0]!.field}`,
        message: `${label(s.id)} (${cAt[i]}) changed: ${changes.map((c) => `${c.field}${c.detail}`).join(', ')}`,
      });
  });
  return out;
}

function valueAt(content: Record<string, unknown>, phase: number, j: number, field: string): unknown {
  const ph = (content['phases'] as unknown[])[phase];
  const s = isObject(ph) ? (ph['steps'] as unknown[])[j] : undefined;
  return isObject(s) ? s[field] : undefined;
}

/** Fields whose fingerprints differ, each with what can be told: "(now -5)", "(true → false)", "(removed)". */
function fieldChanges(
  recorded: Record<string, string>,
  current: Record<string, string>,
  now: (field: string) => unknown,
): { field: string; detail: string }[] {
  const out: { field: string; detail: string }[] = [];
  const keys = [...new Set([...Object.keys(recorded), ...Object.keys(current)])].sort();
  for (const k of keys) {
    const r = recorded[k];
    const c = current[k];
    if (r === c) continue;
    const v = now(k);
    if (c === undefined) out.push({ field: k, detail: ' (removed)' });
    else if (r === undefined) out.push({ field: k, detail: scalar(v) ? ` (added: ${show(v)})` : ' (added)' });
    else out.push({ field: k, detail: changeOf(r, v) });
  }
  return out;
}

function scalar(v: unknown): boolean {
  return v === null || (typeof v !== 'object' && v !== undefined);
}

/** " (true → false)" when a fingerprint gives the old value away, else " (now X)" for a scalar. */
function changeOf(print: string, now: unknown): string {
  if (!scalar(now)) return '';
  const candidates: unknown[] = [];
  if (typeof now === 'boolean') candidates.push(!now);
  if (typeof now === 'string' && now.trim() !== '' && Number.isFinite(Number(now)))
    candidates.push(Number(now));
  if (typeof now === 'number') candidates.push(String(now));
  candidates.push(null, true, false);
  const before = candidates.find((c) => fingerprint(c) === print);
  return before !== undefined ? ` (${show(before)} → ${show(now)})` : ` (now ${show(now)})`;
}

/** Positions (into `seq`) of one longest strictly increasing subsequence, O(n log n). */
function longestIncreasing(seq: number[]): Set<number> {
  const tails: number[] = [];
  const prev: number[] = new Array(seq.length).fill(-1);
  seq.forEach((v, i) => {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (seq[tails[mid]!]! < v) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1]!;
    tails[lo] = i;
  });
  const keep = new Set<number>();
  for (let i = tails.at(-1) ?? -1; i >= 0; i = prev[i]!) keep.add(i);
  return keep;
}
