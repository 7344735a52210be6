/**
 * Kubernetes release rules an upgrade plan checks, as data, each with its source.
 */
import { compareVersions, parseVersion } from '../util/semver.js';
import { TALOS_RELEASES } from './talos.js';

/**
 * The version skew policy (https://kubernetes.io/releases/version-skew-policy/): kube-apiserver
 * instances of an HA control plane differ by at most one minor, so a control plane moves one minor
 * at a time; a kubelet is never newer than the apiserver and may be up to three minors older
 * (since Kubernetes 1.28; two before it).
 */
export const SKEW_POLICY = {
  source: 'https://kubernetes.io/releases/version-skew-policy/',
  controlPlaneMinorsPerStep: 1,
  kubeletMaxMinorsBehind: (apiserverMinor: number): number => (apiserverMinor >= 28 ? 3 : 2),
} as const;

/**
 * The newest patch of a Kubernetes minor ferry knows: the default Kubernetes of the Talos releases
 * it tables (talos.md §8), as text "v1.35.4", or undefined when no tabled Talos ships that minor.
 * Pre-releases never count.
 */
export function newestKnownPatch(minor: string): string | undefined {
  const candidates = TALOS_RELEASES.map((r) => parseVersion(r.kubernetesDefault)!)
    .filter((v) => v.pre === '' && `${v.major}.${v.minor}` === minor)
    .sort(compareVersions);
  const v = candidates.at(-1);
  return v ? `v${v.major}.${v.minor}.${v.patch}` : undefined;
}
