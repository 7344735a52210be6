/**
 * Client-side retention (S3 lifecycle rules cannot say "keep daily/weekly", mgmt.md §8): keep the
 * newest N versions, the newest of each of the last D days and of each of the last W ISO weeks that
 * have a backup, as restic's `forget` counts them. The newest is always kept. Pure.
 */
export interface RetentionPolicy {
  keep?: number;
  keepDaily?: number;
  keepWeekly?: number;
}

export interface Dated {
  versionId: string;
  lastModified: Date;
}

export function hasRetention(p: RetentionPolicy): boolean {
  return p.keep !== undefined || p.keepDaily !== undefined || p.keepWeekly !== undefined;
}

function day(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** ISO 8601 week, "2026-W49" (UTC). */
export function isoWeek(d: Date): string {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const dow = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - dow);
  const year = t.getUTCFullYear();
  const week = Math.ceil(((t.getTime() - Date.UTC(year, 0, 1)) / 86_400_000 + 1) / 7);
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/**
 * `versions` in any order; ties in time keep the given order (S3 lists a key's versions newest
 * first). Returns the versions to delete, oldest last, and the reasons each kept one is kept.
 */
export function applyRetention<T extends Dated>(
  versions: T[],
  policy: RetentionPolicy,
): { keep: Map<string, string[]>; remove: T[] } {
  const sorted = [...versions].sort((a, b) => b.lastModified.getTime() - a.lastModified.getTime());
  const keep = new Map<string, string[]>();
  const why = (v: T, r: string): void => {
    keep.set(v.versionId, [...(keep.get(v.versionId) ?? []), r]);
  };
  if (!hasRetention(policy)) {
    for (const v of sorted) why(v, 'no retention policy');
    return { keep, remove: [] };
  }
  if (sorted[0]) why(sorted[0], 'newest');
  sorted.slice(0, policy.keep ?? 0).forEach((v, i) => {
    why(v, `keep ${i + 1}/${policy.keep}`);
  });
  const bucketed = (n: number | undefined, key: (d: Date) => string, label: string) => {
    if (!n) return;
    const seen = new Set<string>();
    for (const v of sorted) {
      const k = key(v.lastModified);
      if (seen.has(k)) continue;
      if (seen.size >= n) break;
      seen.add(k);
      why(v, `${label} ${k}`);
    }
  };
  bucketed(policy.keepDaily, day, 'daily');
  bucketed(policy.keepWeekly, isoWeek, 'weekly');
  return { keep, remove: sorted.filter((v) => !keep.has(v.versionId)) };
}
