/**
 * What `ferry audit --kit` looks for in a kit before it reports a finding as resolved by it. A rule
 * that knows the kit's remedy states it as data on its finding (Finding.kitChecks), built from the
 * same values its remediation text quotes; checkKit evaluates one check against the kit's files.
 * Pure: the kit arrives as text (kit/read.ts reads it), and a secret file is never read, only
 * found listed.
 */
import { parseAllDocuments } from 'yaml';
import type { KitContents } from '../kit/read.js';
import { KIT } from '../knowledge/kit-paths.js';

export type Scalar = string | number | boolean;

export type ValueTest =
  /** Equal to `value` (lists and maps compared as data). */
  | { op: 'equals'; value: unknown }
  /** A list holding every one of `values`; Talos extraArgs may carry a list as "a,b". */
  | { op: 'includes'; values: readonly Scalar[] }
  /** A list holding none of `values` (or no list at all). */
  | { op: 'excludes'; values: readonly Scalar[] }
  | { op: 'absent' };

/** A value in one YAML document of a kit file. */
export interface KitValueRef {
  file: string;
  /** The document's `kind` (Talos v1.14 documents); none: the first document without a kind. */
  doc?: string;
  /** With `doc`: the one of that kind whose `name` is this (KubeAdmissionControlConfig per plugin). */
  docName?: string;
  /** Keys from the document's root; a `key=value` segment picks the list item whose key is value. */
  path: readonly string[];
}

export type KitCheck =
  | ({ kind: 'value'; test: ValueTest } & KitValueRef)
  /** kubeadm/steps.json runs `script` (a step of the kubeadm-side preparation), whose text names each of `mentions`. */
  | { kind: 'step'; script: string; mentions: readonly string[] }
  /** The kit lists `file`; when it is not secret, its text names each of `mentions`. */
  | { kind: 'file'; file: string; mentions: readonly string[] };

export type CheckOutcome = { ok: true } | { ok: false; why: string };

/** Where a setting lives, as remediations write it: `cluster.apiServer.certSANs`, `KubeProxyConfig.enabled`. */
export function settingPath(at: Omit<KitValueRef, 'file'>): string {
  let out = at.doc ? `${at.doc}${at.docName ? `(${at.docName})` : ''}` : '';
  for (const seg of at.path)
    out += seg.includes('=') || /^\d+$/.test(seg) ? `[${seg}]` : `${out === '' ? '' : '.'}${seg}`;
  return out;
}

/** How a setting reads in a remediation: `cluster.proxy.disabled: true`, `KubeProxyConfig.enabled: false`. */
export function settingText(at: Omit<KitValueRef, 'file'>, test: ValueTest): string {
  const path = settingPath(at);
  switch (test.op) {
    case 'equals':
      return `${path}: ${show(test.value)}`;
    case 'includes':
      return `${path} listing ${test.values.map(show).join(', ')}`;
    case 'excludes':
      return `${path} without ${test.values.map(show).join(', ')}`;
    case 'absent':
      return `no ${path}`;
  }
}

/** The same setting checked in each of the kit's Talos patches `files`. */
export function patchChecks(
  files: readonly string[],
  at: Omit<KitValueRef, 'file'>,
  test: ValueTest,
): KitCheck[] {
  return files.map((file) => ({ kind: 'value', file, ...at, test }));
}

/** One clause of a resolution: what the kit does, as checked. */
export function describeCheck(c: KitCheck): string {
  switch (c.kind) {
    case 'value':
      return `${c.file} ${c.test.op === 'absent' ? 'has' : 'sets'} ${settingText(c, c.test)}`;
    case 'step':
      return `${KIT.prepSteps} runs ${c.script}${c.mentions.length ? ` (${c.mentions.join(', ')})` : ''}`;
    case 'file':
      return `the kit has ${c.file}`;
  }
}

/** The file a check is about. */
export function checkFile(c: KitCheck): string {
  return c.kind === 'step' ? c.script : c.file;
}

/** Evaluates checks against one kit, parsing each YAML file once. */
export function kitChecker(kit: KitContents): (c: KitCheck) => CheckOutcome {
  const listed = new Map(kit.summary.files.map((f) => [f.path, f]));
  const parsed = new Map<string, unknown[] | string>();
  const docsOf = (file: string): unknown[] | string => {
    const known = parsed.get(file);
    if (known !== undefined) return known;
    const text = kit.text.get(file);
    let out: unknown[] | string;
    if (text === undefined)
      out = listed.get(file)?.secret ? `${file} is secret (not read)` : `the kit has no ${file}`;
    else {
      const docs = parseAllDocuments(text);
      const bad = docs.find((d) => d.errors.length > 0);
      out = bad ? `${file} is not valid YAML: ${bad.errors[0]!.message}` : docs.map((d) => d.toJS());
    }
    parsed.set(file, out);
    return out;
  };

  function mentionsIn(file: string, mentions: readonly string[]): CheckOutcome {
    const entry = listed.get(file);
    if (!entry) return { ok: false, why: `the kit has no ${file}` };
    if (entry.secret) return { ok: true };
    const text = kit.text.get(file) ?? '';
    const missing = mentions.filter((m) => !text.includes(m));
    return missing.length ? { ok: false, why: `${file} does not name ${missing.join(', ')}` } : { ok: true };
  }

  return (c) => {
    switch (c.kind) {
      case 'file':
        return mentionsIn(c.file, c.mentions);
      case 'step': {
        const step = kit.summary.prepSteps.find((s) => s.apply.split(/\s+/).includes(c.script));
        if (!step) return { ok: false, why: `${KIT.prepSteps} has no step running ${c.script}` };
        return mentionsIn(c.script, c.mentions);
      }
      case 'value': {
        const docs = docsOf(c.file);
        if (typeof docs === 'string') return { ok: false, why: docs };
        const doc = docs.find((d) =>
          c.doc === undefined
            ? kindOf(d) === undefined
            : kindOf(d) === c.doc && (c.docName === undefined || (isRecord(d) && d['name'] === c.docName)),
        );
        const where = `${c.file}${c.doc ? ` (${c.doc}${c.docName ? ` ${c.docName}` : ''})` : ''}`;
        if (doc === undefined && c.test.op !== 'absent' && c.test.op !== 'excludes')
          return { ok: false, why: `${where}: no such document` };
        const value = doc === undefined ? undefined : at(doc, c.path);
        const verdict = test(value, c.test);
        return verdict
          ? { ok: true }
          : {
              ok: false,
              why: `${where} has ${settingPath({ path: c.path })}: ${value === undefined ? '(not set)' : show(value)}`,
            };
      }
    }
  };
}

function kindOf(doc: unknown): string | undefined {
  const k = isRecord(doc) ? doc['kind'] : undefined;
  return typeof k === 'string' ? k : undefined;
}

function at(root: unknown, path: readonly string[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    const eq = seg.indexOf('=');
    if (Array.isArray(cur) && eq > 0) {
      const [k, v] = [seg.slice(0, eq), seg.slice(eq + 1)];
      cur = cur.find((item) => isRecord(item) && String(item[k]) === v);
    } else if (Array.isArray(cur) && /^\d+$/.test(seg)) cur = cur[Number(seg)];
    else if (isRecord(cur)) cur = cur[seg];
    else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

function asList(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return v.split(',').map((s) => s.trim());
  return undefined;
}

function test(value: unknown, t: ValueTest): boolean {
  switch (t.op) {
    case 'equals':
      return sameData(value, t.value);
    case 'includes': {
      const list = asList(value);
      return list !== undefined && t.values.every((x) => list.some((y) => sameData(x, y)));
    }
    case 'excludes': {
      const list = asList(value) ?? [];
      return t.values.every((x) => !list.some((y) => sameData(x, y)));
    }
    case 'absent':
      return value === undefined;
  }
}

/** Data equality; numbers and their decimal strings are the same value (YAML writes either). */
function sameData(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'string') return String(a) === b;
  if (typeof a === 'string' && typeof b === 'number') return a === String(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameData(x, b[i]))
    );
  }
  if (isRecord(a) || isRecord(b)) {
    if (!isRecord(a) || !isRecord(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && sameData(a[k], b[k]));
  }
  return a === b;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}
