/**
 * A synthetic cluster for the audit benchmark: N nodes and P pods with real owner chains
 * (Deployment → ReplicaSet → Pod, DaemonSet → Pod, StatefulSet → Pod, CronJob → Job → Pod, mirror
 * pods), PodDisruptionBudgets, Services, and a share of migration traps (hostPath mounts on the
 * read-only root or absent on Talos, PDBs with no room, single replicas without a PDB, custom node
 * labels and taints). Deterministic for a given size: a seeded generator, no clock, no randomness.
 *
 * Objects are emitted one at a time (`emit(key, object)`), so the caller can stream them to disk
 * without holding 150,000 pods in memory. Pods look like `kubectl get pods -o json` output with
 * managedFields removed (a few KB each), so the dump size is realistic.
 */
import type { KubeObject, ResourceKey } from '../../src/snapshot/model.js';

export interface SyntheticSize {
  nodes: number;
  pods: number;
  /** Names of the control planes (the bench reuses examples/lab-cluster's cp-1..cp-3). */
  controlPlanes: readonly string[];
  namespaces: number;
}

export interface SyntheticCounts {
  objects: Partial<Record<ResourceKey, number>>;
  /** Traps planted, by kind, so the bench can say what the audit should have found. */
  traps: Record<string, number>;
}

export type Emit = (key: ResourceKey, obj: KubeObject) => void;

/** mulberry32: a small seeded PRNG, so every run builds the same cluster. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CREATED = '2026-06-01T08:00:00Z';
const STARTED = '2026-11-20T10:00:00Z';
const POOLS = ['general', 'general', 'general', 'data', 'batch', 'gpu'] as const;
const ZONES = ['zone-a', 'zone-b', 'zone-c'] as const;
const POOL_LABEL = 'bench.example/pool';

function uidOf(kind: string, n: number): string {
  const h = (n * 2654435761) >>> 0;
  const k = [...kind].reduce((a, c) => (a * 31 + c.charCodeAt(0)) >>> 0, 7);
  const hex = (x: number, w: number) => x.toString(16).padStart(w, '0').slice(-w);
  return `${hex(k, 8)}-${hex(h >>> 16, 4)}-4${hex(h, 3)}-8${hex(n, 3)}-${hex(h ^ k, 8)}${hex(n, 4)}`;
}

function suffix(r: () => number, len: number): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (let i = 0; i < len; i++) s += alphabet[Math.floor(r() * alphabet.length)];
  return s;
}

function ownerRef(kind: string, apiVersion: string, name: string, uid: string) {
  return [{ apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true }];
}

interface Template {
  labels: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: a PodSpec, built structurally
  spec: any;
}

/** A typical application pod spec: one or two containers, probes, env, the service-account volume. */
function appSpec(name: string, r: () => number, extra: { hostPath?: { path: string; type?: string } } = {}) {
  const image = `registry.bench.example/apps/${name}:1.${Math.floor(r() * 40)}.${Math.floor(r() * 10)}`;
  const volumes: unknown[] = [
    { name: 'config', configMap: { name: `${name}-config`, defaultMode: 420 } },
    {
      name: 'kube-api-access',
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
            },
          },
        ],
      },
    },
  ];
  const mounts: unknown[] = [
    { name: 'config', mountPath: '/etc/app', readOnly: true },
    { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
  ];
  if (extra.hostPath) {
    volumes.push({
      name: 'host',
      hostPath: { path: extra.hostPath.path, ...(extra.hostPath.type ? { type: extra.hostPath.type } : {}) },
    });
    mounts.push({ name: 'host', mountPath: '/host' });
  }
  const probe = (path: string) => ({
    httpGet: { path, port: 8080, scheme: 'HTTP' },
    initialDelaySeconds: 5,
    periodSeconds: 10,
    timeoutSeconds: 1,
    successThreshold: 1,
    failureThreshold: 3,
  });
  return {
    containers: [
      {
        name,
        image,
        imagePullPolicy: 'IfNotPresent',
        ports: [
          { name: 'http', containerPort: 8080, protocol: 'TCP' },
          { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
        ],
        env: [
          { name: 'APP_NAME', value: name },
          { name: 'LOG_LEVEL', value: 'info' },
          { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
          { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
        ],
        resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
        livenessProbe: probe('/healthz'),
        readinessProbe: probe('/ready'),
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ['ALL'] },
        },
        volumeMounts: mounts,
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
      },
    ],
    volumes,
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    serviceAccountName: 'default',
    serviceAccount: 'default',
    securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
    schedulerName: 'default-scheduler',
  };
}

const DEFAULT_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

// biome-ignore lint/suspicious/noExplicitAny: a PodSpec, built structurally
function podStatus(spec: any, node: { name: string; ip: string }, podIP: string, phase = 'Running') {
  const ready = phase === 'Running' ? 'True' : 'False';
  return {
    phase,
    conditions: [
      { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: STARTED },
      { type: 'Initialized', status: 'True', lastTransitionTime: STARTED },
      { type: 'Ready', status: ready, lastTransitionTime: STARTED },
      { type: 'ContainersReady', status: ready, lastTransitionTime: STARTED },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: STARTED },
    ],
    hostIP: node.ip,
    hostIPs: [{ ip: node.ip }],
    podIP,
    podIPs: [{ ip: podIP }],
    startTime: STARTED,
    qosClass: 'Burstable',
    containerStatuses: (spec.containers as { name: string; image: string }[]).map((c) => ({
      name: c.name,
      image: c.image,
      imageID: `${c.image.split(':')[0]}@sha256:${'ab12'.repeat(16)}`,
      containerID: `containerd://${'0f1e'.repeat(16)}`,
      ready: phase === 'Running',
      started: phase === 'Running',
      restartCount: 0,
      state:
        phase === 'Running'
          ? { running: { startedAt: STARTED } }
          : { terminated: { exitCode: 0, reason: 'Completed', startedAt: STARTED, finishedAt: STARTED } },
    })),
  };
}

export function generateCluster(size: SyntheticSize, emit: Emit): SyntheticCounts {
  const r = rng(20261130);
  const objects: Partial<Record<ResourceKey, number>> = {};
  const traps: Record<string, number> = {};
  const out: Emit = (key, obj) => {
    objects[key] = (objects[key] ?? 0) + 1;
    emit(key, obj);
  };
  const trap = (k: string) => {
    traps[k] = (traps[k] ?? 0) + 1;
  };

  // ---- namespaces
  const namespaces = ['kube-system', 'default', 'monitoring'];
  for (let i = 0; i < size.namespaces; i++) namespaces.push(`team-${String(i).padStart(3, '0')}`);
  for (const ns of namespaces) {
    out('namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: ns,
        uid: uidOf('Namespace', namespaces.indexOf(ns)),
        labels: {
          'kubernetes.io/metadata.name': ns,
          ...(ns.startsWith('team-') ? { 'pod-security.kubernetes.io/enforce': 'baseline' } : {}),
        },
        creationTimestamp: CREATED,
      },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
  }

  // ---- nodes
  interface NodeInfo {
    name: string;
    ip: string;
    pool: string;
    cidr: number;
  }
  const nodes: NodeInfo[] = [];
  const workers: NodeInfo[] = [];
  const ipOf = (i: number) => `10.${64 + (i >> 16)}.${(i >> 8) & 255}.${(i & 255) + 0}`;
  for (let i = 0; i < size.nodes; i++) {
    const cp = i < size.controlPlanes.length;
    const name = cp ? size.controlPlanes[i]! : `worker-${String(i).padStart(5, '0')}`;
    const pool = cp ? 'control-plane' : POOLS[i % POOLS.length]!;
    const n: NodeInfo = { name, ip: ipOf(i + 10), pool, cidr: i };
    nodes.push(n);
    if (!cp) workers.push(n);
    const zone = ZONES[i % ZONES.length]!;
    const labels: Record<string, string> = {
      'beta.kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/hostname': name,
      'kubernetes.io/os': 'linux',
      'topology.kubernetes.io/zone': zone,
      ...(cp
        ? {
            'node-role.kubernetes.io/control-plane': '',
            'node.kubernetes.io/exclude-from-external-load-balancers': '',
          }
        : { [POOL_LABEL]: pool }),
    };
    const taints: unknown[] = cp
      ? [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }]
      : [];
    if (pool === 'gpu') {
      taints.push({ key: 'bench.example/dedicated', value: 'gpu', effect: 'NoSchedule' });
      trap('node-taint');
    }
    out('nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        uid: uidOf('Node', i),
        labels,
        annotations: {
          'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///var/run/containerd/containerd.sock',
          'node.alpha.kubernetes.io/ttl': '0',
          'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        },
        creationTimestamp: CREATED,
      },
      spec: {
        podCIDR: `10.${128 + (i >> 8)}.${i & 255}.0/24`,
        podCIDRs: [`10.${128 + (i >> 8)}.${i & 255}.0/24`],
        ...(taints.length ? { taints } : {}),
      },
      status: {
        addresses: [
          { type: 'InternalIP', address: n.ip },
          { type: 'Hostname', address: name },
        ],
        allocatable: { cpu: '7800m', 'ephemeral-storage': '95551679124', memory: '15969056Ki', pods: '110' },
        capacity: { cpu: '8', 'ephemeral-storage': '103680236Ki', memory: '16371488Ki', pods: '110' },
        conditions: ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map((type) => ({
          type,
          status: type === 'Ready' ? 'True' : 'False',
          lastHeartbeatTime: '2026-11-30T08:59:00Z',
          lastTransitionTime: CREATED,
          reason:
            type === 'Ready'
              ? 'KubeletReady'
              : `KubeletHas${type === 'PIDPressure' ? 'SufficientPID' : 'No'}`,
          message: 'kubelet is posting ready status',
        })),
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: {
          architecture: 'amd64',
          bootID: uidOf('boot', i),
          containerRuntimeVersion: 'containerd://1.7.24',
          kernelVersion: '6.1.0-28-amd64',
          kubeProxyVersion: 'v1.32.4',
          kubeletVersion: 'v1.32.4',
          machineID: uidOf('machine', i).replace(/-/g, ''),
          operatingSystem: 'linux',
          osImage: 'Debian GNU/Linux 12 (bookworm)',
          systemUUID: uidOf('system', i),
        },
      },
    });
  }

  let podCount = 0;
  let podIp = 0;
  const nextPodIp = () => {
    podIp++;
    return `10.${128 + ((podIp >> 16) & 63)}.${(podIp >> 8) & 255}.${podIp & 255}`;
  };
  let uidSeq = 1_000_000;
  const emitPod = (
    ns: string,
    name: string,
    node: NodeInfo,
    owner: ReturnType<typeof ownerRef> | undefined,
    t: Template,
    phase = 'Running',
    extraMeta: Record<string, unknown> = {},
  ) => {
    podCount++;
    const spec = { ...t.spec, nodeName: node.name, tolerations: t.spec.tolerations ?? DEFAULT_TOLERATIONS };
    out('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: ns,
        uid: uidOf('Pod', uidSeq++),
        labels: t.labels,
        ...(owner
          ? { ownerReferences: owner, generateName: `${name.slice(0, name.lastIndexOf('-') + 1)}` }
          : {}),
        creationTimestamp: STARTED,
        resourceVersion: String(100000 + podCount),
        ...extraMeta,
      },
      spec,
      status: podStatus(spec, node, nextPodIp(), phase),
    });
  };

  // ---- mirror pods (static pods of the control planes)
  const cps = nodes.slice(0, size.controlPlanes.length);
  for (const cp of cps) {
    for (const component of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
      emitPod(
        'kube-system',
        `${component}-${cp.name}`,
        cp,
        [
          {
            apiVersion: 'v1',
            kind: 'Node',
            name: cp.name,
            uid: uidOf('Node', nodes.indexOf(cp)),
            controller: true,
          },
        ] as never,
        {
          labels: { component, tier: 'control-plane' },
          spec: {
            containers: [
              {
                name: component,
                image: `registry.k8s.io/${component}:v1.32.4`,
                command: [component],
                resources: { requests: { cpu: '100m' } },
              },
            ],
            hostNetwork: true,
            priorityClassName: 'system-node-critical',
            tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
          },
        },
        'Running',
        {
          annotations: {
            'kubernetes.io/config.mirror': uidOf('mirror', podCount),
            'kubernetes.io/config.source': 'file',
          },
        },
      );
    }
  }

  // ---- DaemonSets: one pod per node
  const daemonSets: {
    ns: string;
    name: string;
    hostPaths: { path: string; type?: string; readOnly?: boolean }[];
  }[] = [
    {
      ns: 'kube-system',
      name: 'node-agent',
      hostPaths: [{ path: '/var/lib/node-agent', type: 'DirectoryOrCreate' }],
    },
    // traps: a log shipper writing under /usr (read-only root on Talos), a CSI plugin reading /etc/cacert.
    {
      ns: 'monitoring',
      name: 'log-shipper',
      hostPaths: [
        { path: '/var/log', readOnly: true },
        { path: '/usr/local/log-shipper', type: 'DirectoryOrCreate' },
      ],
    },
    { ns: 'kube-system', name: 'csi-node', hostPaths: [{ path: '/etc/cacert', readOnly: true }] },
    {
      ns: 'monitoring',
      name: 'node-exporter',
      hostPaths: [
        { path: '/proc', readOnly: true },
        { path: '/sys', readOnly: true },
      ],
    },
  ];
  const dsTemplates: { name: string; ns: string; owner: ReturnType<typeof ownerRef>; t: Template }[] = [];
  daemonSets.forEach((d, i) => {
    const uid = uidOf('DaemonSet', i);
    const labels = { 'app.kubernetes.io/name': d.name };
    const spec = appSpec(d.name, r);
    spec.volumes.push(
      ...d.hostPaths.map((h, j) => ({
        name: `host-${j}`,
        hostPath: { path: h.path, ...(h.type ? { type: h.type } : {}) },
      })),
    );
    spec.containers[0]!.volumeMounts.push(
      ...d.hostPaths.map((h, j) => ({
        name: `host-${j}`,
        mountPath: `/host/${j}`,
        ...(h.readOnly ? { readOnly: true } : {}),
      })),
    );
    const tspec = {
      ...spec,
      tolerations: [{ operator: 'Exists' }],
      priorityClassName: 'system-node-critical',
    };
    if (d.name === 'log-shipper') trap('hostpath-readonly-root');
    if (d.name === 'csi-node') trap('hostpath-absent');
    out('daemonsets', {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: d.name, namespace: d.ns, uid, labels, generation: 1, creationTimestamp: CREATED },
      spec: {
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: tspec },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        revisionHistoryLimit: 10,
      },
      status: {
        currentNumberScheduled: nodes.length,
        desiredNumberScheduled: nodes.length,
        numberAvailable: nodes.length,
        numberReady: nodes.length,
        updatedNumberScheduled: nodes.length,
        numberMisscheduled: 0,
        observedGeneration: 1,
      },
    });
    dsTemplates.push({
      name: d.name,
      ns: d.ns,
      owner: ownerRef('DaemonSet', 'apps/v1', d.name, uid),
      t: { labels, spec: tspec },
    });
  });
  for (const n of nodes)
    for (const d of dsTemplates) emitPod(d.ns, `${d.name}-${suffix(r, 5)}`, n, d.owner, d.t);

  // ---- placement: workers round-robin; the gpu pool only for pods that tolerate it
  const schedulable = workers.filter((w) => w.pool !== 'gpu');
  let cursor = 0;
  const place = () => schedulable[cursor++ % schedulable.length]!;
  const teams = namespaces.filter((n) => n.startsWith('team-'));

  // ---- StatefulSets (3 replicas, PVC-backed, PDB maxUnavailable 1) and CronJobs per namespace
  let stsIndex = 0;
  let jobIndex = 0;
  for (const ns of teams) {
    for (let k = 0; k < 2; k++) {
      const name = `db-${k}`;
      const uid = uidOf('StatefulSet', stsIndex++);
      const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/instance': `${ns}-${name}` };
      const spec = { ...appSpec(name, r), nodeSelector: { [POOL_LABEL]: 'data' } };
      if (k === 0) trap('node-label-selector');
      out('statefulsets', {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name, namespace: ns, uid, labels, generation: 1, creationTimestamp: CREATED },
        spec: {
          replicas: 3,
          serviceName: name,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec },
          volumeClaimTemplates: [
            {
              apiVersion: 'v1',
              kind: 'PersistentVolumeClaim',
              metadata: { name: 'data' },
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } } },
            },
          ],
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
        },
        status: {
          replicas: 3,
          readyReplicas: 3,
          currentReplicas: 3,
          updatedReplicas: 3,
          availableReplicas: 3,
        },
      });
      out('poddisruptionbudgets', pdb(ns, name, labels, { maxUnavailable: 1 }, 3, 2));
      const dataNodes = workers.filter((w) => w.pool === 'data');
      for (let j = 0; j < 3; j++) {
        const pod = { ...spec, hostname: `${name}-${j}`, subdomain: name };
        emitPod(
          ns,
          `${name}-${j}`,
          dataNodes[(stsIndex * 3 + j) % dataNodes.length]!,
          ownerRef('StatefulSet', 'apps/v1', name, uid),
          {
            labels: { ...labels, 'statefulset.kubernetes.io/pod-name': `${name}-${j}` },
            spec: pod,
          },
        );
      }
      out('services', service(ns, name, labels, true));
    }
    // A nightly CronJob with its last Job and that Job's completed pod.
    const cjName = 'nightly-report';
    const cjUid = uidOf('CronJob', jobIndex);
    const jobName = `${cjName}-29143200`;
    const jobUid = uidOf('Job', jobIndex++);
    const labels = { 'app.kubernetes.io/name': cjName };
    const jobSpec = { ...appSpec(cjName, r), restartPolicy: 'OnFailure' };
    out('cronjobs', {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: cjName, namespace: ns, uid: cjUid, creationTimestamp: CREATED },
      spec: {
        schedule: '0 2 * * *',
        jobTemplate: { spec: { template: { metadata: { labels }, spec: jobSpec } } },
      },
      status: { lastScheduleTime: '2026-11-30T02:00:00Z' },
    });
    out('jobs', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: jobName,
        namespace: ns,
        uid: jobUid,
        labels,
        ownerReferences: ownerRef('CronJob', 'batch/v1', cjName, cjUid),
        creationTimestamp: '2026-11-30T02:00:00Z',
      },
      spec: {
        completions: 1,
        parallelism: 1,
        backoffLimit: 6,
        template: { metadata: { labels }, spec: jobSpec },
      },
      status: { succeeded: 1, completionTime: '2026-11-30T02:04:00Z' },
    });
    emitPod(
      ns,
      `${jobName}-${suffix(r, 5)}`,
      place(),
      ownerRef('Job', 'batch/v1', jobName, jobUid),
      { labels, spec: jobSpec },
      'Succeeded',
    );
  }

  // ---- a few bare pods (undrainable)
  const bare = Math.min(20, teams.length);
  for (let i = 0; i < bare; i++) {
    trap('bare-pod');
    emitPod(teams[i]!, `debug-${i}`, place(), undefined, {
      labels: { run: `debug-${i}` },
      spec: appSpec('debug', r),
    });
  }

  // ---- Deployments fill the rest of the pod budget
  const REPLICAS = [1, 2, 2, 3, 3, 3, 5, 5, 10];
  let depIndex = 0;
  while (podCount < size.pods) {
    const ns = teams[depIndex % teams.length]!;
    const name = `svc-${depIndex}`;
    const replicas = Math.min(REPLICAS[Math.floor(r() * REPLICAS.length)]!, size.pods - podCount);
    const uid = uidOf('Deployment', depIndex);
    const hash = suffix(r, 10);
    const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/part-of': ns };
    let hostPath: { path: string; type?: string } | undefined;
    const roll = r();
    if (roll < 0.005) {
      hostPath = { path: '/var/run/docker.sock', type: 'Socket' };
      trap('hostpath-absent');
    } else if (roll < 0.01) {
      hostPath = { path: '/etc/app-state', type: 'DirectoryOrCreate' };
      trap('hostpath-readonly-root');
    }
    const spec = appSpec(name, r, hostPath ? { hostPath } : {});
    out('deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name,
        namespace: ns,
        uid,
        labels,
        annotations: { 'deployment.kubernetes.io/revision': '3' },
        generation: 3,
        creationTimestamp: CREATED,
      },
      spec: {
        replicas,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
      },
      status: {
        replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        updatedReplicas: replicas,
        observedGeneration: 3,
      },
    });
    const rsName = `${name}-${hash}`;
    const rsUid = uidOf('ReplicaSet', depIndex * 2);
    const podLabels = { ...labels, 'pod-template-hash': hash };
    out('replicasets', {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: rsName,
        namespace: ns,
        uid: rsUid,
        labels: podLabels,
        ownerReferences: ownerRef('Deployment', 'apps/v1', name, uid),
        creationTimestamp: CREATED,
      },
      spec: {
        replicas,
        selector: { matchLabels: podLabels },
        template: { metadata: { labels: podLabels }, spec },
      },
      status: {
        replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        fullyLabeledReplicas: replicas,
      },
    });
    if (depIndex % 2 === 0) {
      // The previous revision, scaled to zero: what `kubectl get rs` shows after a rollout.
      const oldHash = suffix(r, 10);
      const oldLabels = { ...labels, 'pod-template-hash': oldHash };
      out('replicasets', {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: `${name}-${oldHash}`,
          namespace: ns,
          uid: uidOf('ReplicaSet', depIndex * 2 + 1),
          labels: oldLabels,
          ownerReferences: ownerRef('Deployment', 'apps/v1', name, uid),
          creationTimestamp: CREATED,
        },
        spec: {
          replicas: 0,
          selector: { matchLabels: oldLabels },
          template: { metadata: { labels: oldLabels }, spec },
        },
        status: { replicas: 0 },
      });
    }
    // PDBs: most multi-replica Deployments have one; a few leave no room (minAvailable = replicas).
    if (replicas >= 2 && r() < 0.6) {
      const noRoom = r() < 0.05;
      if (noRoom) trap('pdb-blocking');
      out(
        'poddisruptionbudgets',
        pdb(ns, name, labels, { minAvailable: noRoom ? replicas : replicas - 1 }, replicas, noRoom ? 0 : 1),
      );
    } else if (replicas === 1) trap('single-replica');
    out('services', service(ns, name, labels, false));
    const owner = ownerRef('ReplicaSet', 'apps/v1', rsName, rsUid);
    const t = { labels: podLabels, spec };
    for (let j = 0; j < replicas; j++) emitPod(ns, `${rsName}-${suffix(r, 5)}`, place(), owner, t);
    depIndex++;
  }
  return { objects, traps };
}

function pdb(
  ns: string,
  name: string,
  labels: Record<string, string>,
  spec: { minAvailable?: number; maxUnavailable?: number },
  expected: number,
  allowed: number,
): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name,
      namespace: ns,
      uid: uidOf('PodDisruptionBudget', hashOf(`${ns}/${name}`)),
      creationTimestamp: CREATED,
    },
    spec: { ...spec, selector: { matchLabels: labels } },
    status: {
      currentHealthy: expected,
      desiredHealthy: expected - allowed,
      disruptionsAllowed: allowed,
      expectedPods: expected,
      observedGeneration: 1,
    },
  };
}

function service(ns: string, name: string, labels: Record<string, string>, headless: boolean): KubeObject {
  const h = hashOf(`${ns}/${name}`);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns, uid: uidOf('Service', h), labels, creationTimestamp: CREATED },
    spec: {
      type: 'ClusterIP',
      clusterIP: headless ? 'None' : `10.${96 + ((h >> 16) & 15)}.${(h >> 8) & 255}.${h & 255}`,
      selector: labels,
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 'http' }],
      sessionAffinity: 'None',
    },
    status: { loadBalancer: {} },
  };
}

function hashOf(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
