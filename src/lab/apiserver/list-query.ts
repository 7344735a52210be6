/**
 * The list query of a collection request: label and field selectors checked against the resource's
 * supported fields, and continue tokens that pin a paged list to one store revision. Pure.
 */

import {
  type LabelRequirement,
  matchesLabels,
  parseLabelSelector,
  SelectorError,
} from '../../util/label-selector.js';
import type { KObj } from './object.js';
import { metaOf } from './object.js';
import type { ResourceDef } from './resources.js';
import { type FieldRequirement, matchesFields, parseFieldSelector } from './selectors.js';
import { badRequest } from './status.js';

export type ListQuery = {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
};

export type ContinueToken = { rv: number; start: string };

export function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: t.rv, start: t.start })).toString('base64url');
}

export function decodeContinue(token: string, prefix: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<ContinueToken> & {
      v?: string;
    };
    if (t.v !== 'meta.k8s.io/v1' || typeof t.rv !== 'number' || typeof t.start !== 'string')
      throw new Error('bad shape');
    if (!t.start.startsWith(prefix)) throw new Error('the continue key belongs to another list');
    return { rv: t.rv, start: t.start };
  } catch (err) {
    throw badRequest(`continue key is not valid: ${(err as Error).message}`);
  }
}

export const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export function parseSelectors(
  d: ResourceDef,
  q: ListQuery,
): { labels: LabelRequirement[]; fields: FieldRequirement[] } {
  try {
    const labels = parseLabelSelector(q.labelSelector ?? '');
    const fields = parseFieldSelector(q.fieldSelector ?? '');
    const allowed = new Set(['metadata.name', 'metadata.namespace', ...d.fields]);
    for (const f of fields) {
      if (!allowed.has(f.field)) {
        throw new SelectorError(`field label not supported: ${f.field}`);
      }
    }
    return { labels, fields };
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(err.message);
    throw err;
  }
}

export function matches(sel: { labels: LabelRequirement[]; fields: FieldRequirement[] }, obj: KObj): boolean {
  return matchesLabels(sel.labels, metaOf(obj).labels) && matchesFields(sel.fields, obj);
}
