/** The Cilium operator Deployment as the Helm chart renders it: two replicas on distinct nodes. */
import { CLUSTER } from '../cluster.js';
import { template } from '../pod-template.js';
import { addDeployment } from './deployment.js';
import { apiServerEnv, configMapKeyEnv, fieldEnv } from './fragments.js';
import type { Workloads } from './workloads.js';

export function addCiliumOperator(w: Workloads): void {
  const labels = {
    'app.kubernetes.io/name': 'cilium-operator',
    'app.kubernetes.io/part-of': 'cilium',
    'io.cilium/app': 'operator',
    name: 'cilium-operator',
  };
  const healthGet = () => ({ host: '127.0.0.1', path: '/healthz', port: 9234, scheme: 'HTTP' });
  addDeployment(w, {
    namespace: 'kube-system',
    name: 'cilium-operator',
    labels: { ...labels, 'app.kubernetes.io/managed-by': 'Helm' },
    selector: { 'io.cilium/app': 'operator', name: 'cilium-operator' },
    nodes: ['cp-1', 'worker-3'],
    created: '2025-02-11T09:20:03Z',
    podsCreated: '2026-10-15T02:31:40Z',
    revision: 6,
    strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: '50%' }, type: 'RollingUpdate' },
    template: template(labels, {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            {
              labelSelector: { matchLabels: { 'io.cilium/app': 'operator' } },
              topologyKey: 'kubernetes.io/hostname',
            },
          ],
        },
      },
      automountServiceAccountToken: true,
      containers: [
        {
          args: ['--config-dir=/tmp/cilium/config-map', '--debug=$(CILIUM_DEBUG)'],
          command: ['cilium-operator-generic'],
          env: [
            fieldEnv('K8S_NODE_NAME', 'spec.nodeName'),
            fieldEnv('CILIUM_K8S_NAMESPACE', 'metadata.namespace'),
            configMapKeyEnv('CILIUM_DEBUG', 'cilium-config', 'debug'),
            ...apiServerEnv(),
          ],
          image: `quay.io/cilium/operator-generic:${CLUSTER.ciliumVersion}`,
          livenessProbe: {
            httpGet: healthGet(),
            initialDelaySeconds: 60,
            periodSeconds: 10,
            timeoutSeconds: 3,
          },
          name: 'cilium-operator',
          readinessProbe: { failureThreshold: 5, httpGet: healthGet(), periodSeconds: 5, timeoutSeconds: 3 },
          volumeMounts: [{ mountPath: '/tmp/cilium/config-map', name: 'cilium-config-path', readOnly: true }],
        },
      ],
      hostNetwork: true,
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      priorityClassName: 'system-cluster-critical',
      serviceAccountName: 'cilium-operator',
      tolerations: [{ operator: 'Exists' }],
      volumes: [{ configMap: { name: 'cilium-config' }, name: 'cilium-config-path' }],
    }),
  });
}
