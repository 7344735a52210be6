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

/**
 * Where the kit's target differs from the one given now: a kit for another Talos version has
 * another config format, so its files say nothing about this target. Empty: the same target.
 */
export function targetMismatch(
  kit: KitSummary,
  target: Pick<Target, 'talosVersion' | 'kubernetesVersion' | 'kubeprism' | 'provisioner' | 'infra'>,
): string[] {
  const out: string[] = [];
  const cmp = (field: string, theirs: string | null, ours: string | undefined) => {
    if (theirs !== null && ours !== undefined && theirs !== ours)
      out.push(`${field} ${theirs} (now ${ours})`);
  };
  cmp('Talos', kit.target.talosVersion, target.talosVersion);
  cmp('Kubernetes', kit.target.kubernetesVersion, target.kubernetesVersion);
  cmp('KubePrism', kit.target.kubeprism, target.kubeprism);
  cmp('provisioner', kit.target.provisioner, target.provisioner);
  cmp('infra', kit.target.infra, target.infra);
  return out;
}
