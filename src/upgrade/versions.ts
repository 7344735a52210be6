/**
 * Which version jumps an upgrade may make, and through which stops (pure): Kubernetes one minor
 * at a time (the skew policy), Talos through the latest patch of every minor in between (Talos's
 * supported upgrade paths), each stop a Talos line ferry tables, and never down.
 */
import { newestKnownPatch, SKEW_POLICY } from '../knowledge/kubernetes.js';
import { lookupTalosRelease, SUPPORTED_TALOS_MINORS, type TalosRelease } from '../knowledge/talos.js';
import { TALOS_UPGRADE_PATH } from '../knowledge/talos-upgrade.js';
import { compareMinor, compareVersions, parseVersion, type Version } from '../util/semver.js';
import type { Blocker } from './model.js';

export interface KubernetesStop {
  version: string;
  source: string;
}

export interface TalosStop {
  release: TalosRelease;
  source: string;
}

export type Path<T> = { kind: 'ok'; stops: T[] } | { kind: 'refused'; blocker: Blocker };

const show = (v: Version) => `v${v.major}.${v.minor}.${v.patch}${v.pre ? `-${v.pre}` : ''}`;
const refused = <T>(blocker: Blocker): Path<T> => ({ kind: 'refused', blocker });

/** A released Kubernetes version "vX.Y.Z" (no pre-release, no build): what --kubernetes takes. */
export function parseKubernetesTarget(text: string): Version | undefined {
  if (!/^v?\d+\.\d+\.\d+$/.test(text.trim())) return undefined;
  return parseVersion(text);
}

/**
 * The control plane's stops from `current` to `target`: one per minor. An intermediate minor goes
 * to the newest patch ferry knows of it (its Talos table), else to its .0 with a note to pick the
 * latest patch; the last stop is the target as given.
 */
export function kubernetesPath(current: string, target: string): Path<KubernetesStop> {
  const from = parseVersion(current);
  const to = parseKubernetesTarget(target);
  if (!from)
    return refused({ kind: 'version-unknown', what: 'the current Kubernetes version', found: current });
  if (!to) return refused({ kind: 'version-unknown', what: 'the target Kubernetes version', found: target });
  const c = compareVersions(to, from);
  if (c < 0) return refused({ kind: 'downgrade', what: 'Kubernetes', from: show(from), to: show(to) });
  if (c === 0) return { kind: 'ok', stops: [] };
  if (to.major !== from.major)
    return refused({ kind: 'version-unknown', what: 'a Kubernetes major upgrade', found: target });
  const stops: KubernetesStop[] = [];
  for (let m = from.minor + SKEW_POLICY.controlPlaneMinorsPerStep; m < to.minor; m++) {
    const minor = `${to.major}.${m}`;
    const known = newestKnownPatch(minor);
    stops.push(
      known
        ? {
            version: known,
            source: `the newest ${minor} patch ferry knows (the default Kubernetes of a Talos release it tables)`,
          }
        : {
            version: `v${minor}.0`,
            source: `ferry knows no ${minor} patch: ${minor}.0; prefer the latest ${minor} patch (https://kubernetes.io/releases/) or plan an upgrade to that patch first (--kubernetes)`,
          },
    );
  }
  stops.push({ version: show(to), source: 'the target (--kubernetes)' });
  return { kind: 'ok', stops };
}

/**
 * The kubelet skew a pool left on `kubelet` has while the apiservers run `apiserver`: a blocker
 * when it is newer, or further behind than the skew policy allows.
 */
export function kubeletSkew(pool: string, kubelet: string, apiserver: string): Blocker | undefined {
  const k = parseVersion(kubelet);
  const a = parseVersion(apiserver);
  if (!k || !a) return undefined;
  const maxBehind = SKEW_POLICY.kubeletMaxMinorsBehind(a.minor);
  const behind = (a.major - k.major) * 1000 + (a.minor - k.minor);
  if (behind < 0 || behind > maxBehind) return { kind: 'kubelet-skew', pool, kubelet, apiserver, maxBehind };
  return undefined;
}

/** The Talos line's Kubernetes window, as a blocker when `kubernetes` is outside it. */
export function talosWindow(release: TalosRelease, kubernetes: string): Blocker | undefined {
  const k = parseVersion(kubernetes);
  const min = parseVersion(release.kubernetesMin)!;
  const max = parseVersion(release.kubernetesMaxMinor)!;
  if (!k) return undefined;
  if (compareMinor(k, min) < 0 || compareMinor(k, max) > 0)
    return {
      kind: 'kubernetes-outside-talos-window',
      kubernetes,
      talos: release.version,
      window: { min: release.kubernetesMin, maxMinor: release.kubernetesMaxMinor },
    };
  return undefined;
}

function lineRefusal(text: string, what: string): Blocker {
  const r = lookupTalosRelease(text);
  if (r.kind === 'refused' && r.reason === 'unknown-minor')
    return { kind: 'talos-line-unknown', line: text, known: SUPPORTED_TALOS_MINORS };
  return { kind: 'version-unknown', what, found: text };
}

/**
 * The Talos stops from `current` ("v1.12.3", or only a line "v1.12" when no node says its patch)
 * to `target`: the latest patch of the current line (when the patch is known and older), the
 * latest patch of every minor between, then the target. Every stop must be a line ferry tables
 * and reachable from the stop before it (its minUpgradeFrom).
 */
export function talosPath(current: string, target: string): Path<TalosStop> {
  const t = lookupTalosRelease(target);
  if (t.kind === 'refused') return refused(lineRefusal(target, 'the target Talos version'));
  const to = parseVersion(t.release.version)!;
  const lineOnly = /^v?\d+\.\d+$/.test(current.trim());
  const from = parseVersion(current);
  if (!from) return refused({ kind: 'version-unknown', what: 'the current Talos version', found: current });
  const byMinor = compareMinor(to, from);
  if (byMinor < 0 || (byMinor === 0 && !lineOnly && compareVersions(to, from) < 0))
    return refused({ kind: 'downgrade', what: 'Talos', from: current, to: t.release.version });
  if (byMinor === 0 && !lineOnly && compareVersions(to, from) === 0) return { kind: 'ok', stops: [] };
  if (to.major !== from.major) return refused(lineRefusal(target, 'a Talos major upgrade'));

  const stops: TalosStop[] = [];
  const why = `the latest patch ferry tables of the line (${TALOS_UPGRADE_PATH.source}: through every minor)`;
  if (byMinor > 0 && !lineOnly) {
    const own = lookupTalosRelease(`v${from.major}.${from.minor}`);
    if (own.kind === 'release' && compareVersions(parseVersion(own.release.version)!, from) > 0)
      stops.push({ release: own.release, source: why });
  }
  for (let m = from.minor + 1; m < to.minor; m++) {
    const r = lookupTalosRelease(`v${to.major}.${m}`);
    if (r.kind === 'refused')
      return refused({
        kind: 'talos-line-unknown',
        line: `v${to.major}.${m}`,
        known: SUPPORTED_TALOS_MINORS,
      });
    stops.push({ release: r.release, source: why });
  }
  stops.push({ release: t.release, source: 'the target (--talos)' });

  // Each stop's floor: the oldest release that may upgrade to it.
  let prev = from;
  let prevText = current;
  for (const s of stops) {
    const floor = parseVersion(s.release.minUpgradeFrom)!;
    if (compareMinor(prev, floor) < 0)
      return refused({
        kind: 'talos-floor',
        from: prevText,
        to: s.release.version,
        minUpgradeFrom: s.release.minUpgradeFrom,
      });
    prev = parseVersion(s.release.version)!;
    prevText = s.release.version;
  }
  return { kind: 'ok', stops };
}
