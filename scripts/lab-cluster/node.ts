/** Node objects as the kubelet registers and updates them (kubectl get nodes -o json). */
import type { Allocator } from './allocator.js';
import { CLUSTER, LAST_REBOOT, NODE_POOL_LABEL, type NodeDef, SNAPSHOT_AT } from './cluster.js';
import type { K8s } from './objects.js';
import { at, hex, plus, uidFor } from './seed.js';

export function nodeObject(alloc: Allocator, n: NodeDef): K8s {
  const cp = n.role === 'control-plane';
  const memCapacity = n.memoryKi;
  // allocatable = capacity − systemReserved (1Gi) − kubeReserved (512Mi) − evictionHard (300Mi)
  const memAllocatable = memCapacity - 1048576 - 524288 - 307200;
  const storageCapacityKi = 102626232;
  const storageAllocatable = Math.floor(storageCapacityKi * 1024 * 0.9);
  const heartbeat = at(SNAPSHOT_AT - 12_000);
  const since = cp ? at(LAST_REBOOT + 95_000) : plus(n.created, 60);
  const condition = (type: string, status: string, reason: string, message: string) => ({
    lastHeartbeatTime: heartbeat,
    lastTransitionTime: since,
    message,
    reason,
    status,
    type,
  });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: alloc.meta('Node', n.name, undefined, n.created, {
      annotations: {
        'csi.volume.kubernetes.io/nodeid': JSON.stringify({
          'cinder.csi.openstack.org': uidFor(`instance/${n.name}`),
        }),
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': n.name,
        'kubernetes.io/os': 'linux',
        'topology.cinder.csi.openstack.org/zone': 'nova',
        ...(cp
          ? {
              'node-role.kubernetes.io/control-plane': '',
              'node.kubernetes.io/exclude-from-external-load-balancers': '',
            }
          : {}),
        ...(n.pool ? { [NODE_POOL_LABEL]: n.pool } : {}),
      },
    }),
    // No taints on the control planes: kubeadm registered them with `taints: []`.
    spec: { podCIDR: `10.244.${n.cidrIndex}.0/24`, podCIDRs: [`10.244.${n.cidrIndex}.0/24`] },
    status: {
      addresses: [
        { address: n.ip, type: 'InternalIP' },
        { address: n.name, type: 'Hostname' },
      ],
      allocatable: {
        cpu: `${n.cpu * 1000 - 500}m`,
        'ephemeral-storage': String(storageAllocatable),
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
        memory: `${memAllocatable}Ki`,
        pods: '150',
      },
      capacity: {
        cpu: String(n.cpu),
        'ephemeral-storage': `${storageCapacityKi}Ki`,
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
        memory: `${memCapacity}Ki`,
        pods: '150',
      },
      conditions: [
        condition('NetworkUnavailable', 'False', 'CiliumIsUp', 'Cilium is running on this node'),
        condition(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
        ),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        architecture: 'amd64',
        bootID: uidFor(`boot/${n.name}`),
        containerRuntimeVersion: CLUSTER.containerd,
        kernelVersion: CLUSTER.kernel,
        kubeProxyVersion: '',
        kubeletVersion: CLUSTER.kubernetesVersion,
        machineID: hex(`machine/${n.name}`, 32),
        operatingSystem: 'linux',
        osImage: CLUSTER.osImage,
        systemUUID: uidFor(`instance/${n.name}`),
      },
    },
  };
}
