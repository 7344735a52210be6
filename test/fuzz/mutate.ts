/**
 * Text-level mutations for the fuzz cases (cases.ts): truncation that really breaks the syntax,
 * binary junk from a seeded generator, and edits of one field of a YAML or JSON document. All of
 * them are deterministic: the same input and name give the same bytes.
 */
import { type Document, parseAllDocuments } from 'yaml';

/** mulberry32: a small seeded generator, so "random" junk and offsets are the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a case name: each case gets its own seed, independent of the order of the list. */
export function seedOf(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Bytes no YAML, JSON or PEM reader accepts: NULs, control characters, invalid UTF-8. */
export function junk(length: number, seed: number): Buffer {
  const next = seeded(seed);
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = Math.floor(next() * 256);
  // The first bytes decide how a reader sniffs the file: make them unmistakably binary.
  out.set([0x00, 0xff, 0xfe, 0x07], 0);
  return out;
}

function yamlBroken(text: string): boolean {
  const docs = parseAllDocuments(text);
  return !Array.isArray(docs) || docs.some((d) => d.errors.length > 0);
}

function jsonBroken(text: string): boolean {
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
}

/**
 * The text cut at or after `fraction` of its length where the cut leaves it syntactically broken.
 * A YAML file cut at a line boundary is often still valid YAML (just less of it), which ferry may
 * rightly accept; the cases want a file that cannot be read. A cut just after an opening quote or
 * bracket breaks it for sure; the first such place is tried first (parsing a large file at every
 * offset would take seconds), then every offset.
 */
export function truncate(text: string, fraction: number, syntax: 'yaml' | 'json'): string {
  const broken = syntax === 'yaml' ? yamlBroken : jsonBroken;
  const start = Math.max(1, Math.floor(text.length * fraction));
  const opener = text.slice(start).search(/["'[{]/);
  if (opener >= 0 && broken(text.slice(0, start + opener + 1))) return text.slice(0, start + opener + 1);
  for (let i = start; i < text.length; i++) {
    const cut = text.slice(0, i);
    if (broken(cut)) return cut;
  }
  throw new Error(`no cut at or after ${fraction} of the text leaves it broken`);
}

/** The documents of a multi-document YAML text, edited in place by `edit`, written back. */
export function editYaml(text: string, edit: (docs: Document.Parsed[]) => void): string {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new Error('not YAML documents');
  edit(docs);
  return docs.map((d) => d.toString({ lineWidth: 0 })).join('');
}

/** The document whose `kind` is `kind`. */
export function docOfKind(docs: Document.Parsed[], kind: string): Document.Parsed {
  const d = docs.find((x) => x.get('kind') === kind);
  if (!d) throw new Error(`no ${kind} document`);
  return d;
}

/** Sets `path` in `doc` to a plain value (a list or a map becomes a YAML collection). */
export function setIn(doc: Document.Parsed, path: (string | number)[], value: unknown): void {
  if (!doc.hasIn(path.slice(0, -1))) throw new Error(`no ${path.slice(0, -1).join('.')} in the document`);
  doc.setIn(path, doc.createNode(value));
}

/** Index of the item `name` (of `kind`, when given) in a List document's items. */
export function itemIndex(doc: Document.Parsed, name: string, kind?: string): number {
  const items = doc.toJS().items as { kind?: string; metadata?: { name?: string } }[] | undefined;
  const i = (items ?? []).findIndex((o) => o.metadata?.name === name && (!kind || o.kind === kind));
  if (i < 0) throw new Error(`no item ${kind ?? ''} ${name}`);
  return i;
}

/** JSON edited as data; `indent` keeps the file's look. */
export function editJson(text: string, edit: (v: Record<string, unknown>) => unknown, indent = 2): string {
  const v = JSON.parse(text) as Record<string, unknown>;
  const replaced = edit(v);
  return `${JSON.stringify(replaced === undefined ? v : replaced, null, indent)}\n`;
}

/** `text` with `from` replaced once; throws when `from` is not there, so a stale case fails loudly. */
export function replaceOnce(text: string, from: string | RegExp, to: string): string {
  const found = typeof from === 'string' ? text.includes(from) : from.test(text);
  if (!found) throw new Error(`${String(from)} is not in the text`);
  return text.replace(from, to);
}
