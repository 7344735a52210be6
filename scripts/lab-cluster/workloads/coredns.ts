/** CoreDNS as kubeadm installs it: two replicas spread by a preferred anti-affinity. */
import { CLUSTER } from '../cluster.js';
import { template } from '../pod-template.js';
import { addDeployment } from './deployment.js';
import type { Workloads } from './workloads.js';

export function addCoreDns(w: Workloads): void {
  const dnsLabels = { 'k8s-app': 'kube-dns' };
  addDeployment(w, {
    namespace: 'kube-system',
    name: 'coredns',
    labels: dnsLabels,
    selector: dnsLabels,
    nodes: ['cp-2', 'worker-1'],
    created: '2025-02-11T09:14:41Z',
    podsCreated: '2026-10-14T03:24:18Z',
    revision: 3,
    strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 }, type: 'RollingUpdate' },
    template: template(dnsLabels, {
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              podAffinityTerm: {
                labelSelector: {
                  matchExpressions: [{ key: 'k8s-app', operator: 'In', values: ['kube-dns'] }],
                },
                topologyKey: 'kubernetes.io/hostname',
              },
              weight: 100,
            },
          ],
        },
      },
      containers: [
        {
          args: ['-conf', '/etc/coredns/Corefile'],
          image: CLUSTER.corednsImage,
          livenessProbe: {
            failureThreshold: 5,
            httpGet: { path: '/health', port: 8080, scheme: 'HTTP' },
            initialDelaySeconds: 60,
            timeoutSeconds: 5,
          },
          name: 'coredns',
          ports: [
            { containerPort: 53, name: 'dns', protocol: 'UDP' },
            { containerPort: 53, name: 'dns-tcp' },
            { containerPort: 9153, name: 'metrics' },
          ],
          readinessProbe: { httpGet: { path: '/ready', port: 8181, scheme: 'HTTP' } },
          resources: { limits: { memory: '170Mi' }, requests: { cpu: '100m', memory: '70Mi' } },
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
            readOnlyRootFilesystem: true,
          },
          volumeMounts: [{ mountPath: '/etc/coredns', name: 'config-volume', readOnly: true }],
        },
      ],
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      priorityClassName: 'system-cluster-critical',
      serviceAccountName: 'coredns',
      tolerations: [
        { key: 'CriticalAddonsOnly', operator: 'Exists' },
        { effect: 'NoSchedule', key: 'node-role.kubernetes.io/control-plane' },
      ],
      volumes: [
        {
          configMap: { items: [{ key: 'Corefile', path: 'Corefile' }], name: 'coredns' },
          name: 'config-volume',
        },
      ],
    }),
  });
}
