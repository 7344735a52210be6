/**
 * Objects that use an API version the target Kubernetes no longer serves (pure): every object
 * given (the workload cluster's, the --manifests files') whose apiVersion and kind a minor between
 * the current and the target removes. An object written through the last-applied annotation
 * counts by the version it was applied with, as kubectl would send it again.
 */
import { REMOVED_APIS, type RemovedApi } from '../knowledge/removed-apis.js';
import type { KubeObject } from '../snapshot/model.js';
import { parseVersion } from '../util/semver.js';
import type { Blocker } from './model.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The removals of the minors after `from` up to and including `to`. */
export function removalsBetween(from: string, to: string): RemovedApi[] {
  const f = parseVersion(from);
  const t = parseVersion(to);
  if (!f || !t) return [];
  return REMOVED_APIS.filter((r) => {
    const m = Number(r.removedIn.split('.')[1]);
    return m > f.minor && m <= t.minor;
  });
}

function appliedVersion(o: KubeObject): string | undefined {
  const text = o.metadata.annotations?.[LAST_APPLIED];
  if (typeof text !== 'string') return undefined;
  try {
    const v = (JSON.parse(text) as { apiVersion?: unknown }).apiVersion;
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

const nameOf = (o: KubeObject) =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name ?? '(unnamed)'}`;

/** One blocker per object and removed version it uses, in the order given. */
export function removedApiUses(
  objects: readonly { object: KubeObject; file: string | null }[],
  removals: readonly RemovedApi[],
): Blocker[] {
  if (removals.length === 0) return [];
  const index = new Map(removals.map((r) => [`${r.apiVersion}|${r.kind}`, r]));
  const out: Blocker[] = [];
  for (const { object, file } of objects) {
    const versions = new Set([object.apiVersion, appliedVersion(object)].filter((v) => v !== undefined));
    for (const v of versions) {
      const api = index.get(`${v}|${object.kind}`);
      if (api) out.push({ kind: 'removed-api', object: nameOf(object), file, api });
    }
  }
  return out;
}
