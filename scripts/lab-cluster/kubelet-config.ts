/** The kubelet configuration: what the operator set, and the defaulted form kubeadm stores in the cluster. */
import { CLUSTER } from './cluster.js';
import type { Obj } from './objects.js';

/** What the operator put in the kubeadm config file (the kubelet-config ConfigMap holds the defaulted form). */
const KUBELET_CUSTOM = {
  cgroupDriver: 'systemd',
  maxPods: 150,
  systemReserved: { cpu: '250m', memory: '1Gi' },
  kubeReserved: { cpu: '250m', memory: '512Mi' },
  evictionHard: { 'memory.available': '300Mi', 'nodefs.available': '10%' },
  shutdownGracePeriod: '60s',
  shutdownGracePeriodCriticalPods: '20s',
};

export function kubeletConfigurationInput(): Obj {
  return { apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', ...KUBELET_CUSTOM };
}

export function kubeletConfigurationStored(): Obj {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    authentication: {
      anonymous: { enabled: false },
      webhook: { cacheTTL: '0s', enabled: true },
      x509: { clientCAFile: '/etc/kubernetes/pki/ca.crt' },
    },
    authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTL: '0s', cacheUnauthorizedTTL: '0s' } },
    clusterDNS: [CLUSTER.dnsServiceIP],
    clusterDomain: CLUSTER.dnsDomain,
    containerRuntimeEndpoint: '',
    cpuManagerReconcilePeriod: '0s',
    evictionPressureTransitionPeriod: '0s',
    fileCheckFrequency: '0s',
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    httpCheckFrequency: '0s',
    imageMaximumGCAge: '0s',
    imageMinimumGCAge: '0s',
    logging: {
      flushFrequency: 0,
      options: { json: { infoBufferSize: '0' }, text: { infoBufferSize: '0' } },
      verbosity: 0,
    },
    memorySwap: {},
    nodeStatusReportFrequency: '0s',
    nodeStatusUpdateFrequency: '0s',
    rotateCertificates: true,
    runtimeRequestTimeout: '0s',
    staticPodPath: '/etc/kubernetes/manifests',
    streamingConnectionIdleTimeout: '0s',
    syncFrequency: '0s',
    volumeStatsAggPeriod: '0s',
    ...KUBELET_CUSTOM,
  };
}
