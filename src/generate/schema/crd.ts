/**
 * Validates Kubernetes objects against CustomResourceDefinitions (OpenAPI v3 structural schemas):
 * the schema of `spec.versions[name == apiVersion's version]`. Kubernetes-only keywords
 * (`x-kubernetes-*`, CEL validations) are tolerated, the OpenAPI formats are known, and — as the
 * apiserver prunes unknown fields of structural schemas — an object property that the schema does
 * not declare is an error here, so a misspelt field fails the test instead of vanishing on apply.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { parseAllDocuments } from 'yaml';
import { capiSchemasDir, schemaPath } from './specs.js';
import type { SchemaError } from './talos.js';

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = ((addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ??
  addFormatsPlugin) as unknown as (ajv: Ajv) => void;

interface CrdVersion {
  group: string;
  kind: string;
  version: string;
  schema: Record<string, unknown>;
}

export class CrdValidator {
  private readonly schemas = new Map<string, Record<string, unknown>>();
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly ajv: Ajv;

  constructor(crdFiles: string[]) {
    this.ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(this.ajv);
    for (const f of ['int32', 'int64', 'double', 'float', 'byte']) this.ajv.addFormat(f, true);
    for (const file of crdFiles) {
      for (const v of readCrd(file)) this.schemas.set(gvk(`${v.group}/${v.version}`, v.kind), v.schema);
    }
  }

  /** Every `*.yaml` CRD the package carries (schemas/capi, not recursive). */
  static fromSchemas(): CrdValidator {
    const files = readdirSync(capiSchemasDir())
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => schemaPath('capi', f));
    return new CrdValidator(files);
  }

  knows(apiVersion: string, kind: string): boolean {
    return this.schemas.has(gvk(apiVersion, kind));
  }

  validate(obj: Record<string, unknown>): SchemaError[] {
    const apiVersion = String(obj['apiVersion'] ?? '');
    const kind = String(obj['kind'] ?? '');
    const label = `${kind} ${String((obj['metadata'] as { name?: unknown } | undefined)?.name ?? '?')}`;
    const key = gvk(apiVersion, kind);
    const schema = this.schemas.get(key);
    if (!schema) return [{ document: label, path: '', message: `no CRD for ${apiVersion} ${kind}` }];
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile(closeObjects(schema) as Record<string, unknown>);
      this.compiled.set(key, fn);
    }
    if (fn(obj)) return [];
    return (fn.errors ?? []).map((e) => ({
      document: label,
      path: e.instancePath || '/',
      message: `${e.message ?? 'invalid'}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params['additionalProperty'])})` : ''}`,
    }));
  }
}

function gvk(apiVersion: string, kind: string): string {
  return `${apiVersion}|${kind}`;
}

interface CrdDoc {
  kind?: string;
  spec?: {
    group: string;
    names: { kind: string };
    versions?: { name: string; schema?: { openAPIV3Schema?: Record<string, unknown> } }[];
  };
}

function readCrd(file: string): CrdVersion[] {
  const out: CrdVersion[] = [];
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const crd = doc.toJS() as CrdDoc | null;
    if (crd?.kind !== 'CustomResourceDefinition' || !crd.spec) continue;
    const { group, names } = crd.spec;
    for (const v of crd.spec.versions ?? []) {
      const schema = v.schema?.openAPIV3Schema;
      if (schema) out.push({ group, kind: names.kind, version: v.name, schema });
    }
  }
  return out;
}

/**
 * CRD patterns are Go RE2; the one construct JavaScript lacks here is the inline case-insensitive
 * flag `(?i)`, rewritten as explicit upper/lower ranges.
 */
function jsPattern(p: string): string {
  if (!p.includes('(?i)')) return p;
  return p.replace('(?i)', '').replace(/a-z/g, 'a-zA-Z');
}

/**
 * Structural-schema pruning made strict: an object schema with `properties` and neither
 * `additionalProperties` nor `x-kubernetes-preserve-unknown-fields` accepts only those properties.
 */
function closeObjects(node: unknown): unknown {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
  const src = node as Record<string, unknown>;
  const out: Record<string, unknown> = { ...src };
  // Only the keywords that hold subschemas are walked; `default`, `enum` etc. are data.
  const props = src['properties'];
  if (props && typeof props === 'object') {
    out['properties'] = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, closeObjects(v)]));
  }
  if (src['items']) out['items'] = closeObjects(src['items']);
  if (src['additionalProperties'] && typeof src['additionalProperties'] === 'object') {
    out['additionalProperties'] = closeObjects(src['additionalProperties']);
  }
  for (const k of ['anyOf', 'allOf', 'oneOf'] as const) {
    if (Array.isArray(src[k])) out[k] = (src[k] as unknown[]).map(closeObjects);
  }
  if (src['not']) out['not'] = closeObjects(src['not']);
  if (typeof src['pattern'] === 'string') out['pattern'] = jsPattern(src['pattern']);
  if (
    src['properties'] &&
    typeof src['properties'] === 'object' &&
    src['additionalProperties'] === undefined &&
    src['x-kubernetes-preserve-unknown-fields'] !== true
  ) {
    out['additionalProperties'] = false;
  }
  return out;
}
