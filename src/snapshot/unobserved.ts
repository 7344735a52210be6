/**
 * What a snapshot did not observe, as the audit and `ferry snapshot` ask it: per input, the reads
 * that did not happen. Also reads format 1 manifests, which kept a refused or unserved list only
 * as a warning, back into the same records (so an old snapshot is not read as "all observed").
 */
import { RESOURCE_TYPES } from '../ports/kube-kinds.js';
import type { NotObserved, SnapshotInput, SnapshotManifest } from './model.js';
import { COLLECTION_GETS, COLLECTION_LISTS, describeList } from './reads.js';

/** The inputs a manifest says were not observed, each with the reads that did not happen. */
export function unobservedInputs(manifest: SnapshotManifest): ReadonlyMap<SnapshotInput, NotObserved[]> {
  const out = new Map<SnapshotInput, NotObserved[]>();
  for (const n of manifest.unobserved ?? []) {
    const list = out.get(n.input);
    if (list) list.push(n);
    else out.set(n.input, [n]);
  }
  return out;
}

const LIST_WARNING_1 =
  /^(?<list>.+): (?:(?<forbidden>forbidden for this user \(HTTP 403\))|(?<notServed>not served by this API server \(HTTP 404\))); left out of the snapshot/;
const CONFIG_MAP_WARNING_1 =
  /^ConfigMap (?<ns>[^/\s]+)\/(?<name>[^:\s]+): forbidden for this user \(HTTP 403\); left out of the snapshot/;

/** Format 1's warnings about lists and reads that did not happen, as NotObserved records. */
export function unobservedFromWarnings(warnings: readonly string[]): NotObserved[] {
  const out: NotObserved[] = [];
  for (const w of warnings) {
    const cm = CONFIG_MAP_WARNING_1.exec(w)?.groups;
    if (cm) {
      const get = COLLECTION_GETS.find((g) => g.namespace === cm['ns'] && g.names.includes(cm['name']!));
      if (get)
        out.push({
          input: get.input,
          reason: 'forbidden',
          verb: 'get',
          group: '',
          resource: 'configmaps',
          namespace: get.namespace,
          name: cm['name']!,
          message: w,
        });
      continue;
    }
    const l = LIST_WARNING_1.exec(w)?.groups;
    const spec = l && COLLECTION_LISTS.find((s) => describeList(s) === l['list']);
    if (!l || !spec) continue;
    const t = RESOURCE_TYPES[spec.kind];
    out.push({
      input: spec.input,
      reason: l['forbidden'] ? 'forbidden' : 'not-served',
      verb: 'list',
      group: t.group,
      resource: t.plural,
      ...(spec.namespace !== undefined && { namespace: spec.namespace }),
      message: w,
    });
  }
  return out;
}
