/**
 * The kubeadm configuration the cluster was built from. The operator's extraArgs and extraVolumes are
 * defined once here: ClusterConfiguration lists them and the static pod manifests carry them.
 */
import { dirname } from 'node:path';
import { CLUSTER, nodeByName } from './cluster.js';
import { kubeletConfigurationInput } from './kubelet-config.js';
import type { K8s, Obj } from './objects.js';
import { multiDoc } from './serialize.js';

/** A component flag as `[name, value]`, without the leading `--`. */
export type Flag = readonly [name: string, value: string];

/** A host directory kubeadm mounts into the apiserver (`pathType: DirectoryOrCreate`). */
export interface ExtraVolume {
  name: string;
  path: string;
  readOnly?: boolean;
}

const o = CLUSTER.oidc;

export const APISERVER_EXTRA_ARGS: readonly Flag[] = [
  ['oidc-issuer-url', o.issuerUrl],
  ['oidc-client-id', o.clientId],
  ['oidc-username-claim', o.usernameClaim],
  ['oidc-groups-claim', o.groupsClaim],
  ['encryption-provider-config', CLUSTER.encryptionConfigPath],
  ['audit-policy-file', '/etc/kubernetes/audit/policy.yaml'],
  ['audit-log-path', '/var/log/kubernetes/audit/audit.log'],
  ['audit-log-maxage', '7'],
  ['audit-log-maxbackup', '4'],
  ['audit-log-maxsize', '100'],
];

export const APISERVER_EXTRA_VOLUMES: readonly ExtraVolume[] = [
  { name: 'encryption-config', path: dirname(CLUSTER.encryptionConfigPath), readOnly: true },
  { name: 'audit-policy', path: '/etc/kubernetes/audit', readOnly: true },
  { name: 'audit-log', path: '/var/log/kubernetes/audit' },
];

// Prometheus scrapes KCM and scheduler from the node network, hence the wider bind address.
export const CONTROLLER_MANAGER_EXTRA_ARGS: readonly Flag[] = [['bind-address', '0.0.0.0']];
export const SCHEDULER_EXTRA_ARGS: readonly Flag[] = [['bind-address', '0.0.0.0']];
export const ETCD_EXTRA_ARGS: readonly Flag[] = [['listen-metrics-urls', 'http://0.0.0.0:2381']];

/** v1beta4 writes extraArgs as a name/value list. */
function extraArgs(flags: readonly Flag[]): Obj[] {
  return flags.map(([name, value]) => ({ name, value }));
}

export function clusterConfiguration(): Obj {
  return {
    apiVersion: 'kubeadm.k8s.io/v1beta4',
    kind: 'ClusterConfiguration',
    clusterName: CLUSTER.name,
    kubernetesVersion: CLUSTER.kubernetesVersion,
    controlPlaneEndpoint: `${CLUSTER.endpointHost}:${CLUSTER.endpointPort}`,
    certificatesDir: '/etc/kubernetes/pki',
    imageRepository: 'registry.k8s.io',
    encryptionAlgorithm: 'RSA-2048',
    caCertificateValidityPeriod: '87600h0m0s',
    certificateValidityPeriod: '8760h0m0s',
    networking: {
      dnsDomain: CLUSTER.dnsDomain,
      podSubnet: CLUSTER.podSubnet,
      serviceSubnet: CLUSTER.serviceSubnet,
    },
    apiServer: {
      // kubeadm adds the endpoint host itself; the VIP is listed so direct-IP clients verify too.
      // No 127.0.0.1 / localhost: the KubePrism trap.
      certSANs: [CLUSTER.endpointHost, CLUSTER.vip],
      extraArgs: extraArgs(APISERVER_EXTRA_ARGS),
      extraVolumes: APISERVER_EXTRA_VOLUMES.map((v) => ({
        name: v.name,
        hostPath: v.path,
        mountPath: v.path,
        ...(v.readOnly ? { readOnly: true } : {}),
        pathType: 'DirectoryOrCreate',
      })),
    },
    controllerManager: { extraArgs: extraArgs(CONTROLLER_MANAGER_EXTRA_ARGS) },
    scheduler: { extraArgs: extraArgs(SCHEDULER_EXTRA_ARGS) },
    etcd: { local: { dataDir: '/var/lib/etcd', extraArgs: extraArgs(ETCD_EXTRA_ARGS) } },
    dns: {},
    // Cilium runs with kubeProxyReplacement=true, so kubeadm never installed kube-proxy.
    proxy: { disabled: true },
  };
}

function initConfiguration(): Obj {
  const cp1 = nodeByName('cp-1');
  return {
    apiVersion: 'kubeadm.k8s.io/v1beta4',
    kind: 'InitConfiguration',
    localAPIEndpoint: { advertiseAddress: cp1.ip, bindPort: CLUSTER.endpointPort },
    nodeRegistration: {
      name: cp1.name,
      criSocket: 'unix:///var/run/containerd/containerd.sock',
      imagePullPolicy: 'IfNotPresent',
      kubeletExtraArgs: extraArgs([['node-ip', cp1.ip]]),
      // Empty list: kubeadm registers the control planes without the NoSchedule taint.
      taints: [],
    },
  };
}

export function kubeadmConfigFile(): string {
  const header = [
    '# The kubeadm configuration cp-1 was initialised with (`kubeadm init --config kubeadm-config.yaml',
    '# --upload-certs`); cp-2/cp-3 joined with `kubeadm join --control-plane`. No KubeProxyConfiguration:',
    '# kube-proxy is disabled (proxy.disabled) because Cilium replaces it (kubeProxyReplacement=true).',
    '',
  ].join('\n');
  return (
    header + multiDoc([clusterConfiguration(), initConfiguration(), kubeletConfigurationInput()] as K8s[])
  );
}
