/** A Deployment with its ReplicaSets (current and kept revisions) and the current one's pods. */
import { nodeByName } from '../cluster.js';
import { type K8s, type Obj, ownerRef } from '../objects.js';
import { makePod } from '../pod.js';
import { plus, suffix } from '../seed.js';
import type { Workloads } from './workloads.js';

export interface DeploymentDef {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  selector: Record<string, string>;
  /** One replica per entry, scheduled on that node. */
  nodes: string[];
  template: Obj;
  created: string;
  podsCreated: string;
  revision: number;
  strategy?: Obj;
  /** Older revisions kept at 0 replicas, as a rollout leaves them. */
  oldRevisions?: number;
}

export function addDeployment(w: Workloads, d: DeploymentDef): K8s {
  const replicas = d.nodes.length;
  const deployment: K8s = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: w.alloc.meta('Deployment', d.name, d.namespace, d.created, {
      annotations: { 'deployment.kubernetes.io/revision': String(d.revision) },
      generation: d.revision,
      labels: d.labels,
    }),
    spec: {
      progressDeadlineSeconds: 600,
      replicas,
      revisionHistoryLimit: 10,
      selector: { matchLabels: d.selector },
      strategy: d.strategy ?? {
        rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
        type: 'RollingUpdate',
      },
      template: d.template,
    },
    status: {
      availableReplicas: replicas,
      conditions: [
        {
          lastTransitionTime: plus(d.podsCreated, 30),
          lastUpdateTime: plus(d.podsCreated, 30),
          message: 'Deployment has minimum availability.',
          reason: 'MinimumReplicasAvailable',
          status: 'True',
          type: 'Available',
        },
        {
          lastTransitionTime: d.created,
          lastUpdateTime: plus(d.podsCreated, 40),
          message: `ReplicaSet "${d.name}-${suffix(`rs/${d.namespace}/${d.name}/${d.revision}`, 10)}" has successfully progressed.`,
          reason: 'NewReplicaSetAvailable',
          status: 'True',
          type: 'Progressing',
        },
      ],
      observedGeneration: d.revision,
      readyReplicas: replicas,
      replicas,
      updatedReplicas: replicas,
    },
  };
  w.deployments.push(deployment);
  for (let rev = d.revision - (d.oldRevisions ?? 0); rev <= d.revision; rev++) {
    const current = rev === d.revision;
    const hash = suffix(`rs/${d.namespace}/${d.name}/${rev}`, 10);
    const rsName = `${d.name}-${hash}`;
    const tpl = structuredClone(d.template) as { metadata: { labels: Record<string, string> } };
    tpl.metadata.labels = { ...tpl.metadata.labels, 'pod-template-hash': hash };
    const n = current ? replicas : 0;
    const rs: K8s = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: w.alloc.meta(
        'ReplicaSet',
        rsName,
        d.namespace,
        current ? plus(d.podsCreated, -5) : plus(d.created, rev * 86400),
        {
          annotations: {
            'deployment.kubernetes.io/desired-replicas': String(replicas),
            'deployment.kubernetes.io/max-replicas': String(replicas + Math.ceil(replicas * 0.25)),
            'deployment.kubernetes.io/revision': String(rev),
          },
          generation: current ? 1 : 2,
          labels: { ...d.selector, 'pod-template-hash': hash },
          ownerReferences: [ownerRef(deployment)],
        },
      ),
      spec: {
        replicas: n,
        selector: { matchLabels: { ...d.selector, 'pod-template-hash': hash } },
        template: tpl,
      },
      status: current
        ? {
            availableReplicas: n,
            fullyLabeledReplicas: n,
            observedGeneration: 1,
            readyReplicas: n,
            replicas: n,
          }
        : { observedGeneration: 2, replicas: 0 },
    };
    w.replicasets.push(rs);
    if (!current) continue;
    d.nodes.forEach((nodeName, i) => {
      w.pods.push(
        makePod(w.alloc, {
          namespace: d.namespace,
          name: `${rsName}-${suffix(`pod/${rsName}/${i}`, 5)}`,
          template: tpl,
          node: nodeByName(nodeName),
          created: plus(d.podsCreated, i * 7),
          owner: rs,
        }),
      );
    });
  }
  return deployment;
}
