/** The part of the Target every finding records (blockers.md: target-dependent rules say what they assumed). */
import type { Target } from '../facts/target.js';
import type { TargetSummary } from './findings.js';

export function summarizeTarget(t: Target): TargetSummary {
  return {
    talosVersion: t.talosVersion,
    ...(t.kubernetesVersion !== undefined ? { kubernetesVersion: t.kubernetesVersion } : {}),
    kubeprism: t.kubeprism === 'on',
    provisioner: t.provisioner,
  };
}
