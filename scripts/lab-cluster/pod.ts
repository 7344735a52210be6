/**
 * Pods as the API server returns them: a template plus what admission, the scheduler and the kubelet
 * add (service-account token volume, tolerations, node name, priority, status).
 */
import type { Allocator } from './allocator.js';
import type { NodeDef } from './cluster.js';
import { type K8s, type Obj, type OwnerRef, ownerRef } from './objects.js';
import { hex, plus, suffix } from './seed.js';

const PRIORITY: Record<string, number> = {
  'system-node-critical': 2000001000,
  'system-cluster-critical': 2000000000,
};

function qosClass(containers: Obj[]): string {
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const r = (c['resources'] ?? {}) as { requests?: Obj; limits?: Obj };
    if (r.requests || r.limits) any = true;
    const lim = r.limits ?? {};
    const req = r.requests ?? lim;
    if (!lim['cpu'] || !lim['memory'] || req['cpu'] !== lim['cpu'] || req['memory'] !== lim['memory'])
      guaranteed = false;
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export interface PodArgs {
  namespace: string;
  name: string;
  template: Obj;
  node: NodeDef;
  created: string;
  owner?: K8s;
  extraLabels?: Record<string, string>;
  daemonSet?: boolean;
  phase?: 'Running' | 'Succeeded';
  /** For the mirror pods of static pods: no service account, kubelet-specific metadata. */
  mirror?: { annotations: Obj; ownerNode: K8s };
}

/** Service-account token volume the admission plugin injects into every pod that mounts one. */
function kubeApiAccess(seed: string): { volume: Obj; mount: Obj } {
  const name = `kube-api-access-${suffix(seed, 5)}`;
  return {
    volume: {
      name,
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { items: [{ key: 'ca.crt', path: 'ca.crt' }], name: 'kube-root-ca.crt' } },
          {
            downwardAPI: {
              items: [{ fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' }, path: 'namespace' }],
            },
          },
        ],
      },
    },
    mount: { mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', name, readOnly: true },
  };
}

function exists(effect: string, key: string, tolerationSeconds?: number): Obj {
  return {
    effect,
    key,
    operator: 'Exists',
    ...(tolerationSeconds === undefined ? {} : { tolerationSeconds }),
  };
}

/**
 * The tolerations admission and the controllers add: DaemonSet pods ride out node problems, other pods
 * are evicted 300 s after their node goes not-ready; the kubelet gives mirror pods a catch-all.
 */
function addedTolerations(a: PodArgs, own: Obj[], hostNetwork: boolean): Obj[] {
  if (a.daemonSet) {
    return [
      ...own,
      exists('NoExecute', 'node.kubernetes.io/not-ready'),
      exists('NoExecute', 'node.kubernetes.io/unreachable'),
      exists('NoSchedule', 'node.kubernetes.io/disk-pressure'),
      exists('NoSchedule', 'node.kubernetes.io/memory-pressure'),
      exists('NoSchedule', 'node.kubernetes.io/pid-pressure'),
      exists('NoSchedule', 'node.kubernetes.io/unschedulable'),
      ...(hostNetwork ? [exists('NoSchedule', 'node.kubernetes.io/network-unavailable')] : []),
    ];
  }
  if (a.mirror) return [{ effect: 'NoExecute', operator: 'Exists' }];
  return [
    ...own,
    exists('NoExecute', 'node.kubernetes.io/not-ready', 300),
    exists('NoExecute', 'node.kubernetes.io/unreachable', 300),
  ];
}

function containerStatus(
  c: Obj,
  seed: string,
  started: string,
  phase: 'Running' | 'Succeeded',
  init: boolean,
): Obj {
  const done = init || phase === 'Succeeded';
  return {
    containerID: `containerd://${hex(`ctr/${seed}/${String(c['name'])}`, 64)}`,
    image: c['image'],
    lastState: {},
    name: c['name'],
    ready: !done,
    restartCount: 0,
    started: !done,
    state: done
      ? {
          terminated: {
            containerID: `containerd://${hex(`ctr/${seed}/${String(c['name'])}`, 64)}`,
            exitCode: 0,
            finishedAt: plus(started, init ? 3 : 412),
            reason: 'Completed',
            startedAt: started,
          },
        }
      : { running: { startedAt: plus(started, 4) } },
  };
}

export function makePod(alloc: Allocator, a: PodArgs): K8s {
  const tmeta = (a.template['metadata'] ?? {}) as Obj;
  const tspec = structuredClone(a.template['spec']) as Obj;
  const hostNetwork = tspec['hostNetwork'] === true;
  const seed = `${a.namespace}/${a.name}`;
  const phase = a.phase ?? 'Running';

  let containers = tspec['containers'] as Obj[];
  let initContainers = tspec['initContainers'] as Obj[] | undefined;
  let volumes = (tspec['volumes'] as Obj[] | undefined) ?? [];
  if (!a.mirror && tspec['automountServiceAccountToken'] !== false) {
    const acc = kubeApiAccess(seed);
    const mount = (c: Obj): Obj => ({
      ...c,
      volumeMounts: [...((c['volumeMounts'] as Obj[]) ?? []), acc.mount],
    });
    containers = containers.map(mount);
    initContainers = initContainers?.map(mount);
    volumes = [...volumes, acc.volume];
  }
  const tolerations = addedTolerations(a, (tspec['tolerations'] as Obj[] | undefined) ?? [], hostNetwork);

  const priorityClassName = tspec['priorityClassName'] as string | undefined;
  const spec: Obj = {
    ...tspec,
    ...(a.daemonSet
      ? {
          affinity: {
            ...((tspec['affinity'] as Obj | undefined) ?? {}),
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchFields: [{ key: 'metadata.name', operator: 'In', values: [a.node.name] }] },
                ],
              },
            },
          },
        }
      : {}),
    containers,
    ...(initContainers ? { initContainers } : {}),
    enableServiceLinks: true,
    nodeName: a.node.name,
    preemptionPolicy: 'PreemptLowerPriority',
    priority: priorityClassName ? (PRIORITY[priorityClassName] ?? 0) : 0,
    ...(a.mirror
      ? {}
      : {
          serviceAccount: (tspec['serviceAccountName'] as string | undefined) ?? 'default',
          serviceAccountName: (tspec['serviceAccountName'] as string | undefined) ?? 'default',
        }),
    tolerations,
    ...(volumes.length ? { volumes } : {}),
  };
  if (a.mirror) {
    Object.assign(spec, {
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: 30,
    });
  }

  const podIP = hostNetwork ? a.node.ip : alloc.podIp(a.node);
  const started = plus(a.created, 1);
  const labels = { ...((tmeta['labels'] as Obj | undefined) ?? {}), ...(a.extraLabels ?? {}) };
  const annotations = a.mirror?.annotations ?? (tmeta['annotations'] as Obj | undefined);
  // The kubelet makes the Node the controller of a mirror pod (without blockOwnerDeletion).
  const mirrorOwner = a.mirror
    ? (({ blockOwnerDeletion: _, ...rest }: OwnerRef) => rest)(ownerRef(a.mirror.ownerNode))
    : undefined;
  const generateName = a.owner && a.owner.kind !== 'StatefulSet' ? a.name.replace(/[^-]+$/, '') : undefined;
  const ready = phase === 'Running';
  const cond = (type: string, status: boolean, t: string) => ({
    lastProbeTime: null,
    lastTransitionTime: t,
    status: status ? 'True' : 'False',
    type,
    ...((type === 'Ready' || type === 'ContainersReady') && !status ? { reason: 'PodCompleted' } : {}),
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...alloc.meta('Pod', a.name, a.namespace, a.created, {
        ...(annotations ? { annotations } : {}),
        labels,
        ...(generateName ? { generateName } : {}),
        ...(a.owner ? { ownerReferences: [ownerRef(a.owner)] } : {}),
        ...(mirrorOwner ? { ownerReferences: [mirrorOwner] } : {}),
      }),
    },
    spec,
    status: {
      conditions: [
        cond('PodReadyToStartContainers', ready, plus(a.created, 2)),
        cond('Initialized', true, plus(a.created, initContainers ? 20 : 1)),
        cond('Ready', ready, plus(a.created, 30)),
        cond('ContainersReady', ready, plus(a.created, 30)),
        cond('PodScheduled', true, a.created),
      ],
      containerStatuses: containers.map((c) => containerStatus(c, seed, started, phase, false)),
      hostIP: a.node.ip,
      hostIPs: [{ ip: a.node.ip }],
      ...(initContainers
        ? { initContainerStatuses: initContainers.map((c) => containerStatus(c, seed, started, phase, true)) }
        : {}),
      phase,
      podIP,
      podIPs: [{ ip: podIP }],
      qosClass: qosClass(containers),
      startTime: a.created,
    },
  };
}
