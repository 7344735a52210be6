/**
 * Small helpers every rule family of this set imports: fact → evidence, "fact missing" → skip,
 * Kubernetes object → evidence, and target-dependent config field names.
 */

import type { Fact } from '../../facts/model.js';
import type { Target } from '../../facts/target.js';
import type { KubeObject } from '../../snapshot/model.js';
import { type Evidence, evidenceFromSource, type Observation } from '../findings.js';
import { type RuleSkip, skip } from '../rule.js';

/** The fact's sources as evidence; on a conflict, every candidate with its own value. */
export function factEvidence<T>(fact: Fact<T>, show: (v: T) => string, obs: Observation = {}): Evidence[] {
  if (fact.conflict) {
    return fact.conflict.candidates.map((c) =>
      evidenceFromSource(c.source, {
        ...obs,
        observed: show(c.value),
        ...(c.value === fact.conflict!.believed ? { note: 'ferry believes this source' } : {}),
      }),
    );
  }
  const observed = fact.value === undefined ? undefined : show(fact.value);
  const withValue: Observation = observed === undefined ? obs : { ...obs, observed };
  if (fact.provenance.length === 0) return [{ kind: 'target', field: fact.key, ...withValue }];
  return fact.provenance.map((ref) => evidenceFromSource(ref, withValue));
}

/** Evidence pointing at one Kubernetes object (namespace and uid only when it has them). */
export function objectEvidence(o: KubeObject, field?: string, obs: Observation = {}): Evidence {
  return {
    kind: 'object',
    object: {
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.metadata.name,
      ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
      ...(o.metadata.uid ? { uid: o.metadata.uid } : {}),
    },
    ...(field ? { field } : {}),
    ...obs,
  };
}

/** A fact the rule cannot do without is missing: skipped, saying what to provide. */
export function skipFact(fact: Fact<unknown>): RuleSkip {
  return skip([fact.key], fact.missing ?? `the inputs of fact ${fact.key}`);
}

/** v1.14+ writes multi-document Kubernetes config; ≤ v1.13 the legacy v1alpha1 fields (talos.md §3.2). */
export function isMultidoc(target: Target): boolean {
  return target.talos.configFormat === 'multidoc';
}

/** The config field for the target's format, e.g. `cluster.network.podSubnets` vs `KubeNetworkConfig.podSubnets`. */
export function talosField(target: Target, legacy: string, multidoc: string): string {
  return isMultidoc(target) ? multidoc : legacy;
}

/** The first `max` items, plus how many were left out (keeps evidence bounded at 5,000 nodes). */
export function capped<T>(items: readonly T[], max = 10): { shown: T[]; more: number } {
  return { shown: items.slice(0, max), more: Math.max(0, items.length - max) };
}

export function list(values: readonly string[]): string {
  return values.length === 0 ? '(none)' : values.join(', ');
}
