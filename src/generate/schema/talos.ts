/**
 * Validates Talos machine-configuration documents against the release's JSON schema (draft
 * 2020-12, root `oneOf` over every document kind). Each document is checked against the definition
 * of its own kind, which gives precise errors instead of a `oneOf` mismatch.
 *
 * Two modes: `full` is the schema as published, and for a whole stream also what makes it a
 * complete config (complete.ts: the schema alone accepts a patch as a config); `patch` treats a
 * document as a strategic-merge patch: required properties may be absent (the generated config
 * supplies them) and `$patch: delete` directives are removed before checking (they are merge
 * instructions, not configuration).
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { completeConfigErrors } from './complete.js';
import { talosSchemaFile } from './specs.js';

export type TalosValidationMode = 'full' | 'patch';

export interface SchemaError {
  /** Which document (kind, or "v1alpha1" for the legacy Config) and where inside it. */
  document: string;
  path: string;
  message: string;
}

interface Loaded {
  /** kind → $defs name; "v1alpha1.Config" under the key "". */
  kinds: Map<string, string>;
  validators: Map<string, ValidateFunction>;
  full: Ajv2020;
  relaxed: Ajv2020;
  fullId: string;
  relaxedId: string;
}

const cache = new Map<string, Loaded>();

function load(file: string): Loaded {
  const hit = cache.get(file);
  if (hit) return hit;
  const root = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const defs = (root['$defs'] ?? {}) as Record<string, Record<string, unknown>>;
  const kinds = new Map<string, string>();
  for (const [name, def] of Object.entries(defs)) {
    const kindEnum = (def['properties'] as Record<string, { enum?: unknown[] }> | undefined)?.['kind']?.enum;
    if (Array.isArray(kindEnum) && typeof kindEnum[0] === 'string') kinds.set(kindEnum[0], name);
  }
  kinds.set('', 'v1alpha1.Config');
  // Two copies under distinct ids: the relaxed one without `required` (patch mode).
  const fullId = `ferry:talos-full:${file}`;
  const relaxedId = `ferry:talos-relaxed:${file}`;
  const full = newAjv();
  full.addSchema({ ...root, $id: fullId });
  const relaxed = newAjv();
  relaxed.addSchema({ ...(withoutRequired(root) as Record<string, unknown>), $id: relaxedId });
  const loaded: Loaded = { kinds, validators: new Map(), full, relaxed, fullId, relaxedId };
  cache.set(file, loaded);
  return loaded;
}

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = ((addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ??
  addFormatsPlugin) as unknown as (ajv: Ajv2020) => void;

function newAjv(): Ajv2020 {
  // strict off: the Talos schema carries editor keywords (markdownDescription, x-intellij-html-description).
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}

function withoutRequired(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutRequired);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === 'required' && Array.isArray(v)) {
      // A patch document still has to say which document it patches.
      const keep = v.filter((x) => x === 'apiVersion' || x === 'kind');
      if (keep.length > 0) out[k] = keep;
      continue;
    }
    out[k] = withoutRequired(v);
  }
  return out;
}

/** Removes strategic-merge `$patch: delete` directives (map entries and list items). */
export function stripPatchDirectives(node: unknown): unknown {
  if (Array.isArray(node)) return node.filter((x) => !isDirective(x)).map(stripPatchDirectives);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (isDirective(v)) continue;
    out[k] = stripPatchDirectives(v);
  }
  return out;
}

function isDirective(x: unknown): boolean {
  return (
    x !== null && typeof x === 'object' && !Array.isArray(x) && '$patch' in (x as Record<string, unknown>)
  );
}

/** Validates one document; returns every problem found (empty = valid). */
export function validateTalosDocument(
  doc: unknown,
  talosVersion: string,
  mode: TalosValidationMode,
): SchemaError[] {
  const loaded = load(talosSchemaFile(talosVersion));
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    return [{ document: '?', path: '', message: 'a document must be a mapping' }];
  }
  const record = doc as Record<string, unknown>;
  const kind = typeof record['kind'] === 'string' ? (record['kind'] as string) : '';
  const label = kind || 'v1alpha1';
  const def = loaded.kinds.get(kind);
  if (!def)
    return [
      { document: label, path: 'kind', message: `Talos ${talosVersion} has no document kind "${kind}"` },
    ];
  let subject: unknown = record;
  if (mode === 'patch') {
    if (record['$patch'] === 'delete') {
      // A document delete names the document and nothing else.
      const { $patch: _p, ...rest } = record;
      subject = rest;
    } else {
      subject = stripPatchDirectives(record);
    }
  }
  const key = `${mode}:${def}`;
  let validate = loaded.validators.get(key);
  if (!validate) {
    const ajv = mode === 'full' ? loaded.full : loaded.relaxed;
    const id = mode === 'full' ? loaded.fullId : loaded.relaxedId;
    validate = ajv.compile({ $ref: `${id}#/$defs/${def}` });
    loaded.validators.set(key, validate);
  }
  if (validate(subject)) return [];
  return (validate.errors ?? []).map((e) => ({
    document: label,
    path: e.instancePath || '/',
    message: `${e.message ?? 'invalid'}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params['additionalProperty'])})` : ''}`,
  }));
}

/** Validates every document of a machine-config stream; in `full` mode, also that it is complete. */
export function validateTalosDocuments(
  docs: unknown[],
  talosVersion: string,
  mode: TalosValidationMode,
): SchemaError[] {
  const each = docs.flatMap((d) => validateTalosDocument(d, talosVersion, mode));
  return mode === 'full' ? [...each, ...completeConfigErrors(docs, talosVersion)] : each;
}
