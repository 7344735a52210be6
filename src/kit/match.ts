/**
 * Is a kit the one for this cluster and target? `ferry plan --kit` and `ferry audit --kit` both
 * ask before they lean on it.
 */
import type { Target } from '../facts/target.js';
import type { KitSummary } from './read.js';

/**
 * A kit made from another snapshot is worth a warning, not a refusal: the usual sequence is
 * snapshot → generate → prepare → snapshot again → plan. A files directory gets a new createdAt
 * each time it is loaded, so only its source is compared.
 */
export function snapshotMismatch(
  kit: KitSummary,
  snapshot: { source: string; createdAt: string },
  what: 'plan' | 'audit',
): string | null {
  const { source, createdAt } = kit.snapshot;
  if (source && source !== snapshot.source)
    return `the kit was generated from ${source}, this ${what} from ${snapshot.source}: is it the same cluster?`;
  if (source?.startsWith('live') && createdAt && createdAt !== snapshot.createdAt)
    return `the kit was generated from a snapshot taken ${createdAt}, this ${what} from one taken ${snapshot.createdAt}: regenerate the kit if the cluster changed in between`;
  return null;
}

/** One target setting the kit was generated for differently, with the flag that sets it. */
export interface TargetDifference {
  setting: 'Talos' | 'Kubernetes' | 'KubePrism' | 'provisioner' | 'infra';
  flag: 'talos-version' | 'kubernetes-version' | 'kubeprism' | 'provisioner' | 'infra';
  kit: string;
  now: string;
}

type TargetSettings = Pick<
  Target,
  'talosVersion' | 'kubernetesVersion' | 'kubeprism' | 'provisioner' | 'infra'
>;

/**
 * Where the kit's target differs from the one given now: a kit for another Talos version has
 * another config format, so its files say nothing about this target. Empty: the same target.
 * A setting the kit does not record, or the target leaves open, is no difference.
 */
export function targetDifferences(kit: KitSummary, target: TargetSettings): TargetDifference[] {
  const out: TargetDifference[] = [];
  const cmp = (
    setting: TargetDifference['setting'],
    flag: TargetDifference['flag'],
    theirs: string | null,
    ours: string | undefined,
  ) => {
    if (theirs !== null && ours !== undefined && theirs !== ours)
      out.push({ setting, flag, kit: theirs, now: ours });
  };
  cmp('Talos', 'talos-version', kit.target.talosVersion, target.talosVersion);
  cmp('Kubernetes', 'kubernetes-version', kit.target.kubernetesVersion, target.kubernetesVersion);
  cmp('KubePrism', 'kubeprism', kit.target.kubeprism, target.kubeprism);
  cmp('provisioner', 'provisioner', kit.target.provisioner, target.provisioner);
  cmp('infra', 'infra', kit.target.infra, target.infra);
  return out;
}

/** {@link targetDifferences} as phrases, e.g. "Talos v1.12.11 (now v1.13.0)". */
export function targetMismatch(kit: KitSummary, target: TargetSettings): string[] {
  return targetDifferences(kit, target).map((d) => `${d.setting} ${d.kit} (now ${d.now})`);
}
