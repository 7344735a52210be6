/**
 * What a Talos node looks like through the Kubernetes API: its Node object (labels, taints, node
 * info with `osImage: Talos (vX.Y.Z)` and containerd) and, for a control plane, the mirror pods of
 * its static pods (knowledge/talos.md §3.3, §4). Pure.
 */
import type { KObj } from '../apiserver/object.js';
import type { Taint } from '../nodes/schedule.js';
import { REAL_ADDRESS_ANNOTATION } from './import.js';

export const DEFAULT_TALOS_VERSION = 'v1.13.9';

/**
 * Per Talos minor: the containerd it ships and its kernel line, where knowledge/talos.md §8 says
 * (kernel patch levels are not modelled); other minors are shown as v1.13.
 */
const RUNTIME: Record<string, { containerd: string; kernel: string }> = {
  'v1.13': { containerd: '2.2.7', kernel: '6.18.0-talos' },
  'v1.14': { containerd: '2.3.3', kernel: '6.18.0-talos' },
};

export type TalosNodeSpec = {
  name: string;
  role: 'control-plane' | 'worker';
  /** The loopback address the node has in the lab. */
  labAddress: string;
  /** The address it stands in for. */
  realAddress: string | undefined;
  talosVersion: string;
  kubeletVersion: string;
  labels?: Record<string, string>;
  /** Extra taints (machine.nodeTaints); the control-plane taint is added unless scheduling is allowed. */
  taints?: Taint[];
  allowSchedulingOnControlPlanes?: boolean;
  /** Node size; default 4 CPU / 8 GiB / 110 pods. */
  capacity?: { cpu: string; memory: string; pods: string };
};

export function talosNode(s: TalosNodeSpec): KObj {
  const minor = /^v\d+\.\d+/.exec(s.talosVersion)?.[0] ?? 'v1.13';
  const rt = RUNTIME[minor] ?? RUNTIME['v1.13']!;
  const cp = s.role === 'control-plane';
  const labels: Record<string, string> = {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': s.name,
    'kubernetes.io/os': 'linux',
    ...(cp && {
      'node-role.kubernetes.io/control-plane': '',
      'node.kubernetes.io/exclude-from-external-load-balancers': '',
    }),
    ...(s.labels ?? {}),
  };
  const taints: Taint[] = [...(s.taints ?? [])];
  if (cp && !s.allowSchedulingOnControlPlanes)
    taints.push({ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' });
  const capacity = s.capacity ?? { cpu: '4', memory: '8Gi', pods: '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: s.name,
      labels,
      annotations: {
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        ...(s.realAddress && { [REAL_ADDRESS_ANNOTATION]: s.realAddress }),
      },
    },
    spec: taints.length > 0 ? { taints } : {},
    status: {
      capacity,
      allocatable: capacity,
      addresses: [
        { type: 'InternalIP', address: s.labAddress },
        { type: 'Hostname', address: s.name },
      ],
      nodeInfo: {
        architecture: 'amd64',
        operatingSystem: 'linux',
        osImage: `Talos (${s.talosVersion})`,
        kernelVersion: rt.kernel,
        containerRuntimeVersion: `containerd://${rt.containerd}`,
        kubeletVersion: s.kubeletVersion,
        kubeProxyVersion: '',
        machineID: '',
        systemUUID: '',
        bootID: '',
      },
    },
  };
}

const STATIC_PODS = [
  { component: 'kube-apiserver', cpu: '200m', memory: '512Mi' },
  { component: 'kube-controller-manager', cpu: '50m', memory: '256Mi' },
  { component: 'kube-scheduler', cpu: '10m', memory: '64Mi' },
] as const;

/** The mirror pods of a Talos control plane's static pods, owned by its Node. */
export function talosMirrorPods(node: KObj, kubernetesVersion: string): KObj[] {
  const name = node.metadata.name!;
  const image = (c: string) => `registry.k8s.io/${c}:${kubernetesVersion}`;
  return STATIC_PODS.map(({ component, cpu, memory }) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${component}-${name}`,
      namespace: 'kube-system',
      labels: {
        tier: 'control-plane',
        'k8s-app': component,
        component,
        'app.kubernetes.io/name': component,
        'app.kubernetes.io/version': kubernetesVersion.replace(/^v/, ''),
        'app.kubernetes.io/component': 'control-plane',
        'app.kubernetes.io/managed-by': 'Talos',
      },
      annotations: { 'kubernetes.io/config.source': 'http', 'kubernetes.io/config.mirror': 'lab' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata.uid!, controller: true }],
    },
    spec: {
      nodeName: name,
      hostNetwork: true,
      priorityClassName: 'system-cluster-critical',
      tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
      containers: [{ name: component, image: image(component), resources: { requests: { cpu, memory } } }],
    },
  }));
}
