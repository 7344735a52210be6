/**
 * Facts shared by every control-plane component: the per-node instances (static pods with their
 * flags) and the flags kubeadm did not write. Also the helpers the families use to turn "the same
 * flag on every control plane, plus kubeadm-config" into candidates.
 */
import type { Flag, SourceRef, StaticPod } from '../snapshot/model.js';
import { decide, known, missingFact } from './decide.js';
import { flagSetKey, nonDefaultFlags } from './kubeadm-defaults.js';
import type { Candidate, ComponentInstance, Fact } from './model.js';
import { derivedRef, flagAbsentRef, flagRef } from './sources.js';

export function instanceOf(pod: StaticPod): ComponentInstance {
  return { node: pod.node ?? null, image: pod.image ?? null, flags: pod.flags, source: pod.source };
}

export function instancesFact<T>(
  key: string,
  title: string,
  pods: StaticPod[],
  map: (pod: StaticPod) => T,
  missing: string,
): Fact<T[]> {
  if (pods.length === 0) return missingFact(key, title, missing);
  return known(
    key,
    title,
    pods.map(map),
    pods.map((p) => p.source),
  );
}

export function whoRuns(pod: StaticPod): string {
  return pod.node ? `${pod.component}@${pod.node}` : pod.component;
}

const ABSENT = Symbol('absent');

/** A value that follows from a flag being absent (e.g. a Kubernetes default), with what that means. */
export interface Absent<T> {
  [ABSENT]: true;
  value: T;
  meaning: string;
}

export function absent<T>(value: T, meaning: string): Absent<T> {
  return { [ABSENT]: true, value, meaning };
}

function isAbsent<T>(v: T | Absent<T>): v is Absent<T> {
  return typeof v === 'object' && v !== null && ABSENT in v;
}

/**
 * One candidate per static pod: `read` returns the value the pod's flags give, `absent(...)` when
 * the flag is not there and its absence itself means something, or undefined to skip the pod.
 */
export function podCandidates<T>(
  pods: StaticPod[],
  flag: string,
  read: (flags: Flag[]) => T | Absent<T> | undefined,
): Candidate<T>[] {
  const out: Candidate<T>[] = [];
  for (const pod of pods) {
    const v = read(pod.flags);
    if (v === undefined) continue;
    if (isAbsent(v)) out.push({ value: v.value, source: flagAbsentRef(pod, flag, v.meaning) });
    else out.push({ value: v, source: flagRef(pod, flag) });
  }
  return out;
}

/** Reason text for "the running components disagree with each other or with kubeadm-config". */
export function runningBeatsDeclared(what: string): string {
  return (
    `ferry believes the running ${what}: it is what the cluster uses now. kubeadm-config is only ` +
    're-applied by kubeadm upgrade/join, so a difference means a manifest or the ConfigMap was edited by ' +
    'hand; control planes that differ from each other need to be reconciled before migrating'
  );
}

/**
 * Flags kubeadm did not write, per running instance, against the same analysis of the extraArgs
 * kubeadm-config declares. Compared as multisets: order on a command line carries no meaning here
 * except for repeated flags, which keep their relative order in the value.
 */
export function extraFlagsFact(opts: {
  key: string;
  title: string;
  pods: StaticPod[];
  declared: { flags: Flag[]; source: SourceRef } | undefined;
  defaults: Record<string, string | null>;
  what: string;
  missing: string;
}): Fact<Flag[]> {
  const candidates: Candidate<Flag[]>[] = opts.pods.map((pod) => ({
    value: nonDefaultFlags(pod.flags, opts.defaults),
    source: derivedRef(`flags kubeadm does not set by default on ${whoRuns(pod)}`, [pod.source]),
  }));
  if (opts.declared) {
    candidates.push({
      value: nonDefaultFlags(opts.declared.flags, opts.defaults),
      source: opts.declared.source,
    });
  }
  return decide({
    key: opts.key,
    title: opts.title,
    candidates,
    equals: (a, b) => flagSetKey(a) === flagSetKey(b),
    reason: runningBeatsDeclared(opts.what),
    missing: opts.missing,
  });
}
