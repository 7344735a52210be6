/**
 * What a snapshot did not observe, as the audit and `ferry snapshot` ask it: per input, the reads
 * that did not happen. Also reads format 1 manifests, which kept a refused or unserved list only
 * as a warning, back into the same records (so an old snapshot is not read as "all observed").
 */

import { inputError } from '../errors.js';
import { RESOURCE_TYPES } from '../ports/kube-kinds.js';
import {
  describeNotObserved,
  type NotObserved,
  type Snapshot,
  type SnapshotInput,
  type SnapshotManifest,
} from './model.js';
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

/**
 * plan, generate, facts and rehearse derive the cluster from every input, so a snapshot that
 * did not observe one (kept with --allow-partial, or a format 1 snapshot whose lists were refused)
 * would be planned as if its nodes, pods or Secrets did not exist. Only the audit, which skips the
 * rules it cannot decide, reads such a snapshot; these refuse it (exit 2).
 */
export function refuseUnobserved(snapshot: Snapshot, command: string, shown: string): void {
  const missing = snapshot.manifest.unobserved ?? [];
  if (missing.length === 0) return;
  const reads = [...new Set(missing.map(describeNotObserved))];
  throw inputError(
    `the snapshot did not observe ${reads.length} read(s) ${command} depends on (${reads.join('; ')}): it would take what was not read for absent`,
    { file: shown },
    `take the snapshot again with credentials allowed those reads (ferry snapshot --print-clusterrole prints the RBAC), without --allow-partial; ferry audit ${shown} reads this one, skipping what it cannot decide`,
  );
}
