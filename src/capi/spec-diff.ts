/**
 * The fields in which a TalosConfig spec differs from the TalosControlPlane's
 * `controlPlaneConfig.controlplane` it was copied from — the comparison CACPPT makes to decide a
 * Machine is outdated (capi.md H7: `reflect.DeepEqual` of the two specs). A field absent on one
 * side equals its zero value on the other ("" / false / 0 / empty list / empty object): after the
 * API server's JSON round trip with `omitempty` both decode to the same Go value. Pure.
 */

export interface SpecDifference {
  /** Dotted path below the spec, with list indexes: `strategicPatches[1]`, `hostname.source`. */
  path: string;
  /** JSON of each side, undefined when absent (or zero). */
  config?: string;
  controlPlane?: string;
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === false || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.values(v as Record<string, unknown>).every(isZero);
  return false;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const show = (v: unknown) => (isZero(v) ? undefined : JSON.stringify(v));

/** An absent struct or list is the empty one, so the fields inside that differ are named. */
function emptyLike(v: unknown, other: unknown): unknown {
  if (!isZero(v)) return v;
  if (isRecord(other)) return {};
  return Array.isArray(other) ? [] : v;
}

/** Differences of `config` (the TalosConfig spec) against `controlPlane` (the TCP's), in field order. */
export function specDifferences(config: unknown, controlPlane: unknown, path = ''): SpecDifference[] {
  if (isZero(config) && isZero(controlPlane)) return [];
  const a = emptyLike(config, controlPlane);
  const b = emptyLike(controlPlane, config);
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])];
    return keys.flatMap((k) => specDifferences(a[k], b[k], path ? `${path}.${k}` : k));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: SpecDifference[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      // An element on one side only differs even when it is a zero value: the lists differ in length.
      if (i >= a.length || i >= b.length)
        out.push({ path: `${path}[${i}]`, config: JSON.stringify(a[i]), controlPlane: JSON.stringify(b[i]) });
      else out.push(...specDifferences(a[i], b[i], `${path}[${i}]`));
    }
    return out;
  }
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  return [{ path: path || '(spec)', config: show(a), controlPlane: show(b) }];
}
