/**
 * Every trap examples/lab-cluster documents (scripts/make-example.ts TRAPS, the source of the README
 * table) must be found by the full audit: a finding from one of the trap's rule ids that points at
 * one of the places the README names for it (an object such as Deployment `apps/wiki`, or a file
 * such as `pki/apiserver.crt`), so that two traps sharing a rule id cannot hide each other.
 * The audit runs with the default target, as `ferry audit examples/lab-cluster` does.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { TRAPS, type Trap } from '../../scripts/make-example.js';
import { runAudit } from '../../src/audit/engine.js';
import type { Evidence, Finding } from '../../src/audit/findings.js';
import { ALL_RULES } from '../../src/audit/rules/index.js';
import { deriveFacts } from '../../src/facts/derive.js';
import { loadSnapshot } from '../../src/snapshot/load.js';
import type { SourceRef } from '../../src/snapshot/model.js';

const EXAMPLE = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'examples', 'lab-cluster');

interface Places {
  objects: { kind: string; namespace?: string; name: string }[];
  /** Paths relative to the example, `*` matching one path segment. */
  files: RegExp[];
}

/** The places a trap's `where` entries name: "`file` · Kind `ns/name` · `field`". */
function placesOf(trap: Trap): Places {
  const objects: Places['objects'] = [];
  const files: RegExp[] = [];
  for (const w of trap.where) {
    for (const m of w.matchAll(/\b([A-Z][A-Za-z]+) `([^`/]+)(?:\/([^`]+))?`/g)) {
      const [, kind, first, second] = m;
      objects.push(second ? { kind: kind!, namespace: first!, name: second } : { kind: kind!, name: first! });
    }
    for (const m of w.matchAll(/(?:^|; )`([^`\s]+\.(?:ya?ml|json|crt|log))`/g)) {
      const glob = m[1]!.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
      files.push(new RegExp(`(^|/)${glob}$`));
    }
  }
  return { objects, files };
}

function sourcePath(ref: SourceRef | undefined): string | undefined {
  if (!ref) return undefined;
  if (ref.kind === 'file') return ref.path;
  if (ref.kind === 'flag') return sourcePath(ref.from);
  return undefined;
}

function points(f: Finding, e: Evidence | undefined, p: Places): boolean {
  const isObject = (kind: string, name: string, namespace?: string) =>
    p.objects.some((o) => o.kind === kind && o.name === name && o.namespace === namespace);
  const isFile = (path: string | undefined) => path !== undefined && p.files.some((re) => re.test(path));
  if (!e) return isObject(f.subject.kind, f.subject.name, f.subject.namespace);
  switch (e.kind) {
    case 'object':
      return isObject(e.object.kind, e.object.name, e.object.namespace);
    case 'node':
      return isObject('Node', e.node);
    case 'file':
      return isFile(e.path);
    case 'flag':
      return isFile(sourcePath(e.from));
    case 'etcd-member':
      // Member evidence is what the etcd/*.json dumps of a files directory say.
      return p.files.some((re) => re.test('etcd/endpoint-status.json') || re.test('etcd/version.json'));
    default:
      return false;
  }
}

it('the audit finds every trap documented in examples/lab-cluster, and no rule errors', async () => {
  // The committed key material is regenerated on every make-example run; its expiry is not a trap.
  const snapshot = await loadSnapshot(EXAMPLE, { strictPki: false });
  const facts = deriveFacts(snapshot);
  const report = runAudit({ snapshot, facts, target: facts.target, rules: ALL_RULES, now: new Date() });

  const missed: string[] = [];
  for (const trap of TRAPS) {
    const places = placesOf(trap);
    const candidates = report.findings.filter((f) => trap.ruleIds.includes(f.ruleId));
    const found = candidates.some(
      (f) => points(f, undefined, places) || f.evidence.some((e) => points(f, e, places)),
    );
    if (!found)
      missed.push(
        `${trap.key} (${trap.title}): ${
          candidates.length === 0
            ? `none of ${trap.ruleIds.join(', ')} reported a finding`
            : `${candidates.length} finding(s) of ${trap.ruleIds.join(', ')}, none pointing at the places the README names`
        }`,
      );
  }
  expect(missed).toEqual([]);
  expect(report.errors).toEqual([]);
  // A trap naming a rule id no rule implements would be "missed" for the wrong reason: say so.
  const known = new Set(ALL_RULES.map((r) => r.id));
  expect(TRAPS.flatMap((t) => t.ruleIds).filter((id) => !known.has(id))).toEqual([]);
});
