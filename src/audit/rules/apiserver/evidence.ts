/**
 * Helpers shared by the kube-apiserver family's rule groups: the Talos config generation of the
 * target, and evidence that points at a flag, a derived fact or the target.
 */

import type { ComponentInstance, Fact } from '../../../facts/model.js';
import { atField } from '../../../facts/sources.js';
import type { Target } from '../../../facts/target.js';
import type { Snapshot } from '../../../snapshot/model.js';
import { type Evidence, evidenceFromSource } from '../../findings.js';

export const isV114 = (t: Target) => t.talos.configFormat === 'multidoc';
/** Talos minor as a number (13 for "1.13"). */
export const talosMinor = (t: Target) => Number(t.talos.minor.split('.')[1] ?? 0);

/** Where a component's extraArgs live in kubeadm's ClusterConfiguration. */
const KUBEADM_EXTRA_ARGS: Record<string, string> = {
  'kube-apiserver': 'apiServer.extraArgs',
  'kube-controller-manager': 'controllerManager.extraArgs',
  'kube-scheduler': 'scheduler.extraArgs',
  etcd: 'etcd.local.extraArgs',
};

/**
 * Evidence that a component runs with a flag: one line per flag, naming every node that carries it;
 * falls back on kubeadm-config's extraArgs when no manifest was supplied.
 */
export function flagEvidence(
  snapshot: Snapshot,
  component: string,
  instances: readonly ComponentInstance[] | undefined,
  flag: string,
  obs: { expected?: string; note?: string } = {},
): Evidence[] {
  const carrying = (instances ?? []).filter((i) => i.flags.some((f) => f.name === flag));
  const first = carrying[0];
  if (first) {
    const values = [
      ...new Set(carrying.flatMap((i) => i.flags.filter((f) => f.name === flag).map((f) => f.value))),
    ];
    const nodes = carrying.map((i) => i.node ?? '(node unknown)');
    const note = [`on ${nodes.join(', ')}`, obs.note].filter(Boolean).join('; ');
    return [
      {
        kind: 'flag',
        component,
        ...(first.node ? { node: first.node } : {}),
        flag,
        from: first.source,
        observed: values.join(' | '),
        ...(obs.expected !== undefined ? { expected: obs.expected } : {}),
        note,
      },
    ];
  }
  const cc = snapshot.kubeadm.clusterConfiguration;
  const path = KUBEADM_EXTRA_ARGS[component];
  if (cc && path) {
    return [evidenceFromSource(atField(cc.source, `${path}[${flag}]`), { ...obs })];
  }
  return [];
}

export function factEvidence<T>(
  fact: Fact<T>,
  obs: { observed?: string; expected?: string; note?: string } = {},
): Evidence[] {
  return fact.provenance.map((p) => evidenceFromSource(p, obs));
}

export function targetEvidence(
  t: Target,
  field: string,
  obs: { observed?: string; expected?: string; note?: string } = {},
): Evidence {
  return { kind: 'target', field, observed: obs.observed ?? t.talosVersion, ...obs };
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
