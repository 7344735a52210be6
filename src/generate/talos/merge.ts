/**
 * The subset of Talos's strategic merge (configpatcher) that ferry's own patches use, to build the
 * complete machine configs of `--full` from a base config and the same patches the kit ships:
 * documents match by (apiVersion, kind, name); maps merge key by key; `$patch: delete` removes a
 * document or key; pod/service subnets are replaced; lists of named items merge by name (as
 * admissionControl does); other lists are appended, scalar lists without duplicates.
 */
import { isRecord } from '../../snapshot/validate.js';
import type { DocPath, TalosDoc } from './doc.js';

const REPLACED_LISTS = new Set(['podSubnets', 'serviceSubnets']);

export function mergeDocs(base: TalosDoc[], patch: TalosDoc[]): TalosDoc[] {
  const out = base.map((d) => ({ ...d, body: clone(d.body), annotations: [...d.annotations] }));
  for (const p of patch) {
    const i = out.findIndex((d) => docKey(d.body) === docKey(p.body));
    if (p.body['$patch'] === 'delete') {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    if (i < 0) {
      out.push({ ...p, body: clone(p.body), annotations: [...p.annotations] });
      continue;
    }
    const target = out[i]!;
    mergeInto(target.body, p.body, []);
    target.annotations.push(...p.annotations);
  }
  return out;
}

function docKey(body: Record<string, unknown>): string {
  return typeof body['kind'] === 'string'
    ? `${String(body['kind'])}|${String(body['name'] ?? '')}`
    : 'v1alpha1';
}

function isDelete(x: unknown): boolean {
  return isRecord(x) && x['$patch'] === 'delete';
}

function mergeInto(left: Record<string, unknown>, right: Record<string, unknown>, path: DocPath): void {
  for (const [k, r] of Object.entries(right)) {
    if (isDelete(r)) {
      delete left[k];
      continue;
    }
    const l = left[k];
    if (isRecord(l) && isRecord(r)) mergeInto(l, r, [...path, k]);
    else if (Array.isArray(l) && Array.isArray(r)) left[k] = mergeLists(k, l, r);
    else left[k] = clone(r);
  }
}

function mergeLists(key: string, l: unknown[], r: unknown[]): unknown[] {
  if (REPLACED_LISTS.has(key)) return clone(r);
  const named = (xs: unknown[]) => xs.every((x) => isRecord(x) && typeof x['name'] === 'string');
  if (named(l) && named(r)) {
    const out = clone(l) as Record<string, unknown>[];
    for (const item of r as Record<string, unknown>[]) {
      const hit = out.find((x) => x['name'] === item['name']);
      if (hit) mergeInto(hit, item, []);
      else out.push(clone(item));
    }
    return out;
  }
  if ([...l, ...r].every((x) => typeof x !== 'object')) return [...new Set([...l, ...r])];
  return [...clone(l), ...clone(r)];
}

function clone<T>(x: T): T {
  return structuredClone(x);
}
