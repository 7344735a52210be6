/**
 * A machine-config document as data plus where each value came from, rendered as YAML with the
 * provenance written as a comment above the value (docs/design.md "Data flow": each value's provenance written beside it).
 */
import { Document, isMap, isScalar, isSeq, type Node } from 'yaml';
import type { SourceRef } from '../../snapshot/model.js';
import { describeRef } from '../provenance.js';

export type DocPath = (string | number)[];

export interface Annotation {
  path: DocPath;
  sources: SourceRef[];
  /** Why ferry chose this value, when the source alone does not say it. */
  why?: string;
}

export interface TalosDoc {
  /** "v1alpha1" for the legacy Config document, else the kind (and name when the kind repeats). */
  label: string;
  body: Record<string, unknown>;
  annotations: Annotation[];
  /** Comment lines written above the document. */
  comment?: string[];
}

/** Most sources a comment lists before it says "+N more" (provenance.json has them all). */
const MAX_SOURCES = 3;

export function commentFor(a: Annotation): string {
  const lines: string[] = [];
  if (a.why) lines.push(` ${a.why}`);
  const shown = a.sources.slice(0, MAX_SOURCES).map((s) => ` from: ${describeRef(s)}`);
  lines.push(...shown);
  if (a.sources.length > MAX_SOURCES)
    lines.push(` (+${a.sources.length - MAX_SOURCES} more sources, see provenance.json)`);
  return lines.join('\n');
}

/** Renders documents as one YAML stream; `header` lines go on top as comments. */
export function renderDocs(header: string[], docs: TalosDoc[]): string {
  const parts = docs.map((d, i) => {
    const doc = new Document(d.body);
    for (const a of d.annotations) attachComment(doc, a);
    const top = [...(i === 0 ? header : []), ...(d.comment ?? [])];
    if (top.length > 0) doc.commentBefore = top.map((l) => (l === '' ? '' : ` ${l}`)).join('\n');
    return doc.toString({ indent: 2, indentSeq: true, lineWidth: 0 });
  });
  return parts.join('---\n');
}

function attachComment(doc: Document, a: Annotation): void {
  const text = commentFor(a);
  if (text === '' || a.path.length === 0) return;
  const parentPath = a.path.slice(0, -1);
  const last = a.path[a.path.length - 1];
  const parent = (parentPath.length === 0 ? doc.contents : doc.getIn(parentPath, true)) as Node | undefined;
  if (isMap(parent)) {
    const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === last);
    if (pair && isScalar(pair.key)) pair.key.commentBefore = join(pair.key.commentBefore, text);
  } else if (isSeq(parent) && typeof last === 'number') {
    const item = parent.items[last];
    if (item && typeof item === 'object' && 'commentBefore' in item) {
      (item as { commentBefore?: string | null }).commentBefore = join(
        (item as { commentBefore?: string | null }).commentBefore,
        text,
      );
    }
  }
}

function join(a: string | null | undefined, b: string): string {
  return a ? `${a}\n${b}` : b;
}

/** provenance.json entries: "cluster.network.podSubnets" (legacy) or "KubeNetworkConfig.podSubnets". */
export function provenanceOf(docs: TalosDoc[]): Record<string, SourceRef[]> {
  const out: Record<string, SourceRef[]> = {};
  for (const d of docs) {
    for (const a of d.annotations) {
      const key = (d.label === 'v1alpha1' ? a.path : [d.label, ...a.path]).join('.');
      out[key] = [...(out[key] ?? []), ...a.sources];
    }
  }
  return out;
}

/** Sets a value at a path, creating maps on the way. */
export function setIn(body: Record<string, unknown>, path: DocPath, value: unknown): void {
  let cur: Record<string, unknown> = body;
  for (const key of path.slice(0, -1)) {
    const k = String(key);
    const next = cur[k];
    if (next === undefined || next === null || typeof next !== 'object') cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[String(path[path.length - 1])] = value;
}

/** Collects a document's body and annotations as values are put in. */
export class DocBuilder {
  readonly body: Record<string, unknown>;
  readonly annotations: Annotation[] = [];

  constructor(
    readonly label: string,
    head: Record<string, unknown>,
    readonly comment: string[] = [],
  ) {
    this.body = { ...head };
  }

  put(path: DocPath, value: unknown, sources: SourceRef[] = [], why?: string): this {
    setIn(this.body, path, value);
    if (sources.length > 0 || why) this.annotations.push(why ? { path, sources, why } : { path, sources });
    return this;
  }

  /** A strategic-merge delete of the value at `path` (Talos `$patch: delete`). */
  remove(path: DocPath, sources: SourceRef[], why: string): this {
    return this.put(path, { $patch: 'delete' }, sources, why);
  }

  build(): TalosDoc {
    const doc: TalosDoc = { label: this.label, body: this.body, annotations: this.annotations };
    if (this.comment.length > 0) doc.comment = this.comment;
    return doc;
  }
}
