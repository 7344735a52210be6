/** The part of the Target every finding records (blockers.md: target-dependent rules say what they assumed). */
import type { Target } from '../facts/target.js';
import { assumedFactsNote } from '../knowledge/talos.js';
import type { TargetSummary } from './findings.js';

export function summarizeTarget(t: Target): TargetSummary {
  const assumed = assumedFactsNote(t.talos);
  return {
    talosVersion: t.talosVersion,
    ...(assumed !== undefined ? { assumed } : {}),
    ...(t.kubernetesVersion !== undefined ? { kubernetesVersion: t.kubernetesVersion } : {}),
    kubeprism: t.kubeprism === 'on',
    provisioner: t.provisioner,
  };
}
