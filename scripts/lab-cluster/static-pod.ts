/** The shape kubeadm v1.32 gives every static pod in /etc/kubernetes/manifests. */
import type { Flag } from './kubeadm-config.js';
import type { K8s, Obj } from './objects.js';

export interface HostVol {
  name: string;
  path: string;
  type: string;
  readOnly?: boolean;
}

/** kubeadm's flags for a component with the operator's extraArgs on top, sorted as kubeadm writes them. */
export function command(
  binary: string,
  defaults: readonly Flag[],
  extraArgs: readonly Flag[] = [],
): string[] {
  const merged = [...new Map([...defaults, ...extraArgs])];
  const sorted = merged.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return [binary, ...sorted.map(([k, v]) => `--${k}=${v}`)];
}

function hostVolumes(vols: HostVol[]): { volumes: Obj[]; volumeMounts: Obj[] } {
  const sorted = [...vols].sort((a, b) => (a.name < b.name ? -1 : 1));
  return {
    volumes: sorted.map((v) => ({ hostPath: { path: v.path, type: v.type }, name: v.name })),
    volumeMounts: sorted.map((v) => ({
      mountPath: v.path,
      name: v.name,
      ...(v.readOnly ? { readOnly: true } : {}),
    })),
  };
}

/** A `DirectoryOrCreate` host directory, the type kubeadm gives every directory it mounts. */
export function hostDir(name: string, path: string, readOnly = false): HostVol {
  return { name, path, type: 'DirectoryOrCreate', readOnly };
}

/** The host trust stores kubeadm mounts into the apiserver and the controller manager. */
export const CA_VOLUMES: readonly HostVol[] = [
  hostDir('ca-certs', '/etc/ssl/certs', true),
  hostDir('etc-ca-certificates', '/etc/ca-certificates', true),
  hostDir('usr-local-share-ca-certificates', '/usr/local/share/ca-certificates', true),
  hostDir('usr-share-ca-certificates', '/usr/share/ca-certificates', true),
];

export interface ProbePaths {
  liveness: string;
  readiness?: string;
  startup: string;
}

/** kubeadm's probes on one endpoint: liveness (8 failures), readiness (3, every second), startup (24). */
export function kubeadmProbes(host: string, port: number, scheme: string, paths: ProbePaths): Obj {
  const probe = (path: string, failureThreshold: number, timing: Obj) => ({
    failureThreshold,
    httpGet: { host, path, port, scheme },
    ...timing,
  });
  const slow = { initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 15 };
  return {
    livenessProbe: probe(paths.liveness, 8, slow),
    ...(paths.readiness
      ? { readinessProbe: probe(paths.readiness, 3, { periodSeconds: 1, timeoutSeconds: 15 }) }
      : {}),
    startupProbe: probe(paths.startup, 24, slow),
  };
}

export interface StaticPodDef {
  component: string;
  image: string;
  command: string[];
  volumes: HostVol[];
  probes: Obj;
  requests: Obj;
  annotations?: Obj;
}

export function staticPod(d: StaticPodDef): K8s {
  const { volumes, volumeMounts } = hostVolumes(d.volumes);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...(d.annotations ? { annotations: d.annotations } : {}),
      creationTimestamp: null,
      labels: { component: d.component, tier: 'control-plane' },
      name: d.component,
      namespace: 'kube-system',
    } as K8s['metadata'],
    spec: {
      containers: [
        {
          command: d.command,
          image: d.image,
          imagePullPolicy: 'IfNotPresent',
          ...d.probes,
          name: d.component,
          resources: { requests: d.requests },
          volumeMounts,
        },
      ],
      hostNetwork: true,
      priority: 2000001000,
      priorityClassName: 'system-node-critical',
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      volumes,
    },
    status: {},
  };
}
