/**
 * The three patch types a real API server accepts, on plain JSON. Pure.
 * - JSON merge patch (RFC 7386, `application/merge-patch+json`)
 * - JSON patch (RFC 6902, `application/json-patch+json`)
 * - strategic merge patch (`application/strategic-merge-patch+json`), a practical subset of
 *   k8s.io/apimachinery/pkg/util/strategicpatch: lists of objects are merged by their merge key
 *   (the names kubectl and controllers rely on: containers/volumes/env by `name`, conditions and
 *   addresses by `type`, ports by `containerPort` or `port`, ...), `metadata.finalizers` is merged
 *   as a set, every other list is replaced; `$patch: replace|delete` and
 *   `$deleteFromPrimitiveList/` are honoured, `$setElementOrder/` and `$retainKeys` are ignored.
 */
import { clone, deepEqual, isPlainObject } from './object.js';

export type PatchType = 'merge' | 'strategic' | 'json';

export const PATCH_CONTENT_TYPES: Record<string, PatchType> = {
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/json-patch+json': 'json',
};

/** `malformed`: the patch itself is not valid (400); `failed`: it cannot be applied (422). */
export class PatchError extends Error {
  readonly kind: 'malformed' | 'failed';
  constructor(kind: 'malformed' | 'failed', message: string) {
    super(message);
    this.name = 'PatchError';
    this.kind = kind;
  }
}

export function applyPatch(type: PatchType, doc: unknown, patch: unknown): unknown {
  switch (type) {
    case 'merge':
      return mergePatch(doc, patch);
    case 'strategic':
      if (!isPlainObject(patch))
        throw new PatchError('malformed', 'strategic merge patch must be a JSON object');
      return strategicMerge(doc, patch);
    case 'json':
      return jsonPatch(doc, patch);
  }
}

// ---- RFC 7386 ---------------------------------------------------------------------------------

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

// ---- RFC 6902 ---------------------------------------------------------------------------------

type Op = { op: string; path: string; from?: string; value?: unknown };

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw new PatchError('malformed', `JSON pointer "${p}" must start with "/"`);
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

/** Walks to the parent of the pointer's last token. */
function parentOf(doc: unknown, tokens: string[], path: string): { parent: Container; last: string } {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, t, path, false)];
    else if (isPlainObject(cur) && Object.hasOwn(cur, t)) cur = cur[t];
    else throw new PatchError('failed', `the path "${path}" does not exist`);
  }
  if (!Array.isArray(cur) && !isPlainObject(cur))
    throw new PatchError('failed', `the path "${path}" does not exist`);
  return { parent: cur, last: tokens[tokens.length - 1]! };
}

function arrayIndex(arr: unknown[], token: string, path: string, forAdd: boolean): number {
  if (forAdd && token === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(token))
    throw new PatchError('failed', `"${token}" in "${path}" is not an array index`);
  const i = Number(token);
  if (i > arr.length || (!forAdd && i === arr.length))
    throw new PatchError('failed', `index ${i} in "${path}" is out of range`);
  return i;
}

function getAt(doc: unknown, path: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return doc;
  const { parent, last } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) return parent[arrayIndex(parent, last, path, false)];
  if (!Object.hasOwn(parent, last)) throw new PatchError('failed', `the path "${path}" does not exist`);
  return parent[last];
}

function removeAt(doc: unknown, path: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) throw new PatchError('failed', 'cannot remove the whole document');
  const { parent, last } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, last, path, false), 1)[0];
  if (!Object.hasOwn(parent, last)) throw new PatchError('failed', `the path "${path}" does not exist`);
  const v = parent[last];
  delete parent[last];
  return v;
}

function addAt(doc: unknown, path: string, value: unknown): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const { parent, last } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, path, true), 0, value);
  else parent[last] = value;
  return doc;
}

export function jsonPatch(doc: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw new PatchError('malformed', 'a JSON patch must be an array of operations');
  let out = clone(doc);
  for (const raw of patch) {
    if (!isPlainObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw new PatchError('malformed', `invalid JSON patch operation ${JSON.stringify(raw)}`);
    }
    const op = raw as Op;
    const needsValue = op.op === 'add' || op.op === 'replace' || op.op === 'test';
    if (needsValue && !Object.hasOwn(op, 'value'))
      throw new PatchError('malformed', `operation "${op.op}" needs a value`);
    if ((op.op === 'move' || op.op === 'copy') && typeof op.from !== 'string') {
      throw new PatchError('malformed', `operation "${op.op}" needs "from"`);
    }
    switch (op.op) {
      case 'add':
        out = addAt(out, op.path, clone(op.value));
        break;
      case 'remove':
        removeAt(out, op.path);
        break;
      case 'replace':
        getAt(out, op.path);
        if (op.path === '') out = clone(op.value);
        else {
          removeAt(out, op.path);
          out = addAt(out, op.path, clone(op.value));
        }
        break;
      case 'move': {
        if (op.path.startsWith(`${op.from}/`))
          throw new PatchError('failed', `cannot move "${op.from}" into itself`);
        const v = removeAt(out, op.from!);
        out = addAt(out, op.path, v);
        break;
      }
      case 'copy':
        out = addAt(out, op.path, clone(getAt(out, op.from!)));
        break;
      case 'test':
        if (!deepEqual(getAt(out, op.path), op.value)) {
          throw new PatchError('failed', `testing value ${op.path} failed: test failed`);
        }
        break;
      default:
        throw new PatchError('malformed', `unknown JSON patch operation "${op.op}"`);
    }
  }
  return out;
}

// ---- strategic merge (subset) -----------------------------------------------------------------

/** Merge keys by field name (strategicpatch reads them from the Go types' struct tags). */
const MERGE_KEYS: Record<string, string | ((item: Record<string, unknown>) => string)> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  imagePullSecrets: 'name',
  resourceClaims: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  hostAliases: 'ip',
  conditions: 'type',
  addresses: 'type',
  ownerReferences: 'uid',
  // ContainerPort merges on containerPort, ServicePort on port.
  ports: (item) => (Object.hasOwn(item, 'containerPort') ? 'containerPort' : 'port'),
};

/** Lists of scalars with patchStrategy=merge: merged as sets. */
const SET_LISTS = new Set(['finalizers']);

const DELETE = Symbol('delete');

export function strategicMerge(target: unknown, patch: Record<string, unknown>): unknown {
  const r = smObject(target, patch);
  return r === DELETE ? {} : r;
}

function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v))
    return v
      .filter((x) => !(isPlainObject(x) && x.$patch !== undefined && Object.keys(x).length === 1))
      .map(stripDirectives);
  if (!isPlainObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('$')) continue;
    out[k] = stripDirectives(x);
  }
  return out;
}

function smObject(target: unknown, patch: Record<string, unknown>): unknown {
  if (patch.$patch === 'delete') return DELETE;
  if (patch.$patch === 'replace') return stripDirectives(patch);
  if (patch.$patch !== undefined)
    throw new PatchError('malformed', `unknown $patch directive "${String(patch.$patch)}"`);
  const out: Record<string, unknown> = isPlainObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v))
        out[field] = cur.filter((x) => !v.some((d) => deepEqual(d, x)));
      continue;
    }
    if (v === null) {
      delete out[k];
    } else if (Array.isArray(v)) {
      out[k] = smList(out[k], v, k);
    } else if (isPlainObject(v)) {
      const r = smObject(out[k], v);
      if (r === DELETE) delete out[k];
      else out[k] = r;
    } else {
      out[k] = v;
    }
  }
  return out;
}

function smList(target: unknown, patch: unknown[], field: string): unknown[] {
  const cur = Array.isArray(target) ? clone(target) : [];
  if (SET_LISTS.has(field)) {
    const out = [...cur];
    for (const x of patch) if (!out.some((y) => deepEqual(x, y))) out.push(x);
    return out;
  }
  const keyOf = MERGE_KEYS[field];
  const objects = patch.every(isPlainObject);
  if (!keyOf || !objects) return stripDirectives(patch) as unknown[];
  if (patch.some((x) => (x as Record<string, unknown>).$patch === 'replace')) {
    return stripDirectives(
      patch.filter((x) => (x as Record<string, unknown>).$patch !== 'replace'),
    ) as unknown[];
  }
  const out = cur;
  for (const raw of patch as Record<string, unknown>[]) {
    const key = typeof keyOf === 'string' ? keyOf : keyOf(raw);
    if (!Object.hasOwn(raw, key)) {
      throw new PatchError(
        'failed',
        `map: ${JSON.stringify(raw)} does not contain declared merge key: ${key}`,
      );
    }
    const idx = out.findIndex((x) => isPlainObject(x) && deepEqual(x[key], raw[key]));
    if (raw.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    const merged = smObject(idx >= 0 ? out[idx] : undefined, raw);
    if (merged === DELETE) continue;
    if (idx >= 0) out[idx] = merged;
    else out.push(merged);
  }
  return out;
}
