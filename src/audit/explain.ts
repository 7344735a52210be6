/**
 * `ferry explain`: the audit's knowledge, used after the fact. Matches error text seen during a
 * migration against the known signatures (src/knowledge/signatures.ts) and returns the rule that
 * predicts it, the cause and the fix. Pure: text in, matches out.
 */
import { type ErrorSignature, SIGNATURES } from '../knowledge/signatures.js';
import { ruleDocsRef } from './docs-link.js';

/**
 * Where a user reads about a signature: its rule's section of docs/rules.md (or, for an error no
 * rule predicts, the signature's own section there), then the upstream threads.
 */
export function sourcesOf(s: ErrorSignature): string[] {
  return [ruleDocsRef(s.ruleId ?? s.id), ...(s.upstream ?? [])];
}

/** Lines longer than this are cut before matching: a log line is evidence, not a document. */
const MAX_LINE = 16_384;

export interface LineMatch {
  /** 1-based line number in the input. */
  line: number;
  text: string;
  signatures: ErrorSignature[];
}

export interface Explanation {
  /** Signatures that matched, in catalog order (most specific first). */
  signatures: ErrorSignature[];
  /** Per matching line (for `--log`); for free text, the lines that matched. */
  lines: LineMatch[];
}

/** JSON logs escape quotes; match the text a human would read. */
function normalize(line: string): string {
  const cut = line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line;
  return cut.replace(/\\"/g, '"').replace(/\\t/g, ' ');
}

/** Signatures matching one piece of text; within a group only the first (most specific) counts. */
export function matchSignatures(
  text: string,
  signatures: readonly ErrorSignature[] = SIGNATURES,
): ErrorSignature[] {
  const t = normalize(text);
  const groups = new Set<string>();
  const out: ErrorSignature[] = [];
  for (const s of signatures) {
    if (s.group && groups.has(s.group)) continue;
    if (s.patterns.some((p) => p.test(t))) {
      out.push(s);
      if (s.group) groups.add(s.group);
    }
  }
  return out;
}

/**
 * Explains free text or a whole log. Each line is matched on its own; for free text the whole
 * text is matched too with line breaks folded, because pasted errors are often wrapped.
 */
export function explain(text: string, opts: { foldLines?: boolean } = {}): Explanation {
  const lines: LineMatch[] = [];
  const seen = new Set<string>();
  const signatures: ErrorSignature[] = [];
  const add = (list: ErrorSignature[]) => {
    for (const s of list) {
      if (seen.has(s.id)) continue;
      seen.add(s.id);
      signatures.push(s);
    }
  };
  text.split(/\r?\n/).forEach((raw, i) => {
    if (!raw.trim()) return;
    const found = matchSignatures(raw);
    if (found.length === 0) return;
    lines.push({ line: i + 1, text: raw, signatures: found });
    add(found);
  });
  if (opts.foldLines) add(matchSignatures(text.replace(/\s*\r?\n\s*/g, ' ')));
  // Report in catalog order so the most specific explanation comes first.
  signatures.sort((a, b) => SIGNATURES.indexOf(a) - SIGNATURES.indexOf(b));
  return { signatures, lines };
}
