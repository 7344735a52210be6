/** The Cilium agent DaemonSet as the Helm chart renders it (kubeProxyReplacement=true, VXLAN tunnel). */
import { CLUSTER } from '../cluster.js';
import type { Obj } from '../objects.js';
import { template } from '../pod-template.js';
import { addDaemonSet } from './daemonset.js';
import { apiServerEnv, configMapKeyEnv, fieldEnv, hostPathVolume } from './fragments.js';
import type { Workloads } from './workloads.js';

const IMAGE = `quay.io/cilium/cilium:${CLUSTER.ciliumVersion}`;

/**
 * Fragments several containers share by reference. The YAML writer renders the repeats as anchors and
 * aliases, and the committed example carries them, so they stay single instances.
 */
interface Shared {
  env: Obj[];
  seLinux: Obj;
}

export function addCiliumAgent(w: Workloads): void {
  const shared: Shared = {
    env: [
      fieldEnv('K8S_NODE_NAME', 'spec.nodeName'),
      fieldEnv('CILIUM_K8S_NAMESPACE', 'metadata.namespace'),
      ...apiServerEnv(),
    ],
    seLinux: { seLinuxOptions: { level: 's0', type: 'spc_t' } },
  };
  const labels = {
    'app.kubernetes.io/name': 'cilium-agent',
    'app.kubernetes.io/part-of': 'cilium',
    'k8s-app': 'cilium',
  };
  addDaemonSet(w, {
    namespace: 'kube-system',
    name: 'cilium',
    labels: { ...labels, 'app.kubernetes.io/managed-by': 'Helm' },
    annotations: { 'meta.helm.sh/release-name': 'cilium', 'meta.helm.sh/release-namespace': 'kube-system' },
    selector: { 'k8s-app': 'cilium' },
    created: '2025-02-11T09:20:03Z',
    generation: 6,
    // Chart default: two agents restart at once; every agent restarts when values change.
    updateStrategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 2 }, type: 'RollingUpdate' },
    template: template(
      labels,
      {
        automountServiceAccountToken: true,
        containers: [agentContainer(shared)],
        hostNetwork: true,
        initContainers: initContainers(shared),
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        priorityClassName: 'system-node-critical',
        serviceAccountName: 'cilium',
        terminationGracePeriodSeconds: 1,
        tolerations: [{ operator: 'Exists' }],
        volumes: volumes(),
      },
      { 'kubectl.kubernetes.io/default-container': 'cilium-agent' },
    ),
  });
}

/** The agent's health endpoint, which all three of its probes use. */
function healthGet(): Obj {
  return {
    host: '127.0.0.1',
    httpHeaders: [{ name: 'brief', value: 'true' }],
    path: '/healthz',
    port: 9879,
    scheme: 'HTTP',
  };
}

function agentContainer({ env, seLinux }: Shared): Obj {
  return {
    args: ['--config-dir=/tmp/cilium/config-map'],
    command: ['cilium-agent'],
    env: [
      ...env,
      { name: 'GOMEMLIMIT', valueFrom: { resourceFieldRef: { divisor: '1', resource: 'limits.memory' } } },
    ],
    image: IMAGE,
    livenessProbe: { failureThreshold: 10, httpGet: healthGet(), periodSeconds: 30, timeoutSeconds: 5 },
    name: 'cilium-agent',
    readinessProbe: { httpGet: healthGet(), periodSeconds: 30, timeoutSeconds: 5 },
    securityContext: {
      capabilities: {
        add: [
          'CHOWN',
          'KILL',
          'NET_ADMIN',
          'NET_RAW',
          'IPC_LOCK',
          'SYS_MODULE',
          'SYS_ADMIN',
          'SYS_RESOURCE',
          'DAC_OVERRIDE',
          'FOWNER',
          'SETGID',
          'SETUID',
        ],
        drop: ['ALL'],
      },
      ...seLinux,
    },
    startupProbe: { failureThreshold: 105, httpGet: healthGet(), initialDelaySeconds: 5, periodSeconds: 2 },
    volumeMounts: [
      { mountPath: '/host/proc/sys/net', name: 'host-proc-sys-net' },
      { mountPath: '/host/proc/sys/kernel', name: 'host-proc-sys-kernel' },
      { mountPath: '/sys/fs/bpf', mountPropagation: 'HostToContainer', name: 'bpf-maps' },
      { mountPath: '/var/run/cilium', name: 'cilium-run' },
      { mountPath: '/var/run/cilium/envoy/sockets', name: 'envoy-sockets' },
      { mountPath: '/host/etc/cni/net.d', name: 'etc-cni-netd' },
      { mountPath: '/var/lib/cilium/clustermesh', name: 'clustermesh-secrets', readOnly: true },
      { mountPath: '/lib/modules', name: 'lib-modules', readOnly: true },
      { mountPath: '/run/xtables.lock', name: 'xtables-lock' },
      { mountPath: '/var/lib/cilium/tls/hubble', name: 'hubble-tls', readOnly: true },
      { mountPath: '/tmp', name: 'tmp' },
    ],
  };
}

/** An init container that copies a helper to the host and runs it in the host's namespaces. */
function onHost(name: string, script: string, env: Obj[], seLinux: Obj): Obj {
  return {
    command: ['sh', '-ec', script],
    env,
    image: IMAGE,
    name,
    securityContext: {
      capabilities: { add: ['SYS_ADMIN', 'SYS_CHROOT', 'SYS_PTRACE'], drop: ['ALL'] },
      ...seLinux,
    },
    volumeMounts: [
      { mountPath: '/hostproc', name: 'hostproc' },
      { mountPath: '/hostbin', name: 'cni-path' },
    ],
  };
}

function initContainers({ env, seLinux }: Shared): Obj[] {
  const binPath = () => ({ name: 'BIN_PATH', value: '/opt/cni/bin' });
  return [
    {
      command: ['cilium-dbg', 'build-config'],
      env,
      image: IMAGE,
      name: 'config',
      volumeMounts: [{ mountPath: '/tmp', name: 'tmp' }],
    },
    onHost(
      'mount-cgroup',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable for sh -ec, not a template
      'cp /usr/bin/cilium-mount /hostbin/cilium-mount;\nnsenter --cgroup=/hostproc/1/ns/cgroup --mount=/hostproc/1/ns/mnt "${BIN_PATH}/cilium-mount" $CGROUP_ROOT;\nrm /hostbin/cilium-mount\n',
      [{ name: 'CGROUP_ROOT', value: '/run/cilium/cgroupv2' }, binPath()],
      seLinux,
    ),
    onHost(
      'apply-sysctl-overwrites',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable for sh -ec, not a template
      'cp /usr/bin/cilium-sysctlfix /hostbin/cilium-sysctlfix;\nnsenter --mount=/hostproc/1/ns/mnt "${BIN_PATH}/cilium-sysctlfix";\nrm /hostbin/cilium-sysctlfix\n',
      [binPath()],
      seLinux,
    ),
    {
      args: ['mount | grep "/sys/fs/bpf type bpf" || mount -t bpf bpf /sys/fs/bpf'],
      command: ['/bin/bash', '-c', '--'],
      image: IMAGE,
      name: 'mount-bpf-fs',
      securityContext: { privileged: true },
      volumeMounts: [{ mountPath: '/sys/fs/bpf', mountPropagation: 'Bidirectional', name: 'bpf-maps' }],
    },
    {
      command: ['/init-container.sh'],
      env: [
        configMapKeyEnv('CILIUM_ALL_STATE', 'cilium-config', 'clean-cilium-state'),
        configMapKeyEnv('CILIUM_BPF_STATE', 'cilium-config', 'clean-cilium-bpf-state'),
        ...apiServerEnv(),
      ],
      image: IMAGE,
      name: 'clean-cilium-state',
      resources: { requests: { cpu: '100m', memory: '100Mi' } },
      securityContext: {
        capabilities: { add: ['NET_ADMIN', 'SYS_MODULE', 'SYS_ADMIN', 'SYS_RESOURCE'], drop: ['ALL'] },
        ...seLinux,
      },
      volumeMounts: [
        { mountPath: '/sys/fs/bpf', name: 'bpf-maps' },
        { mountPath: '/run/cilium/cgroupv2', mountPropagation: 'HostToContainer', name: 'cilium-cgroup' },
        { mountPath: '/var/run/cilium', name: 'cilium-run' },
      ],
    },
    {
      command: ['/install-plugin.sh'],
      image: IMAGE,
      name: 'install-cni-binaries',
      resources: { requests: { cpu: '100m', memory: '10Mi' } },
      securityContext: { capabilities: { drop: ['ALL'] }, ...seLinux },
      volumeMounts: [{ mountPath: '/host/opt/cni/bin', name: 'cni-path' }],
    },
  ];
}

function volumes(): Obj[] {
  return [
    { emptyDir: {}, name: 'tmp' },
    hostPathVolume('cilium-run', '/var/run/cilium', 'DirectoryOrCreate'),
    hostPathVolume('bpf-maps', '/sys/fs/bpf', 'DirectoryOrCreate'),
    hostPathVolume('hostproc', '/proc', 'Directory'),
    hostPathVolume('cilium-cgroup', '/run/cilium/cgroupv2', 'DirectoryOrCreate'),
    hostPathVolume('cni-path', '/opt/cni/bin', 'DirectoryOrCreate'),
    hostPathVolume('etc-cni-netd', '/etc/cni/net.d', 'DirectoryOrCreate'),
    hostPathVolume('lib-modules', '/lib/modules'),
    hostPathVolume('xtables-lock', '/run/xtables.lock', 'FileOrCreate'),
    hostPathVolume('envoy-sockets', '/var/run/cilium/envoy/sockets', 'DirectoryOrCreate'),
    {
      name: 'clustermesh-secrets',
      projected: { defaultMode: 256, sources: [{ secret: { name: 'cilium-clustermesh', optional: true } }] },
    },
    hostPathVolume('host-proc-sys-net', '/proc/sys/net', 'Directory'),
    hostPathVolume('host-proc-sys-kernel', '/proc/sys/kernel', 'Directory'),
    {
      name: 'hubble-tls',
      projected: {
        defaultMode: 256,
        sources: [
          {
            secret: {
              items: [
                { key: 'tls.crt', path: 'server.crt' },
                { key: 'tls.key', path: 'server.key' },
                { key: 'ca.crt', path: 'client-ca.crt' },
              ],
              name: 'hubble-server-certs',
              optional: true,
            },
          },
        ],
      },
    },
  ];
}
