/** A DaemonSet and its pod on every node. */
import { LAST_REBOOT, NODES } from '../cluster.js';
import type { K8s, Obj } from '../objects.js';
import { makePod } from '../pod.js';
import { at, suffix } from '../seed.js';
import type { Workloads } from './workloads.js';

export interface DaemonSetDef {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  selector: Record<string, string>;
  template: Obj;
  created: string;
  generation: number;
  updateStrategy: Obj;
  annotations?: Record<string, string>;
}

export function addDaemonSet(w: Workloads, d: DaemonSetDef): K8s {
  const count = NODES.length;
  const ds: K8s = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: w.alloc.meta('DaemonSet', d.name, d.namespace, d.created, {
      annotations: {
        'deprecated.daemonset.template.generation': String(d.generation),
        ...(d.annotations ?? {}),
      },
      generation: d.generation,
      labels: d.labels,
    }),
    spec: {
      revisionHistoryLimit: 10,
      selector: { matchLabels: d.selector },
      template: d.template,
      updateStrategy: d.updateStrategy,
    },
    status: {
      currentNumberScheduled: count,
      desiredNumberScheduled: count,
      numberAvailable: count,
      numberMisscheduled: 0,
      numberReady: count,
      observedGeneration: d.generation,
      updatedNumberScheduled: count,
    },
  };
  w.daemonsets.push(ds);
  const revision = suffix(`ds/${d.namespace}/${d.name}/${d.generation}`, 10);
  for (const n of NODES) {
    const created = at(
      (n.role === 'control-plane' ? LAST_REBOOT : Date.parse('2026-10-15T02:00:00Z')) +
        120_000 +
        n.cidrIndex * 41_000,
    );
    w.pods.push(
      makePod(w.alloc, {
        namespace: d.namespace,
        name: `${d.name}-${suffix(`dspod/${d.name}/${n.name}`, 5)}`,
        template: d.template,
        node: n,
        created,
        owner: ds,
        daemonSet: true,
        extraLabels: {
          'controller-revision-hash': revision,
          'pod-template-generation': String(d.generation),
        },
      }),
    );
  }
  return ds;
}
