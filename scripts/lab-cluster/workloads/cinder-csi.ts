/**
 * The OpenStack Cinder CSI driver: the node plugin (mounts the host's /etc/cacert) and the controller
 * (reads cloud.conf from the control plane's /etc/kubernetes). Both host paths are migration traps.
 */
import { CLUSTER } from '../cluster.js';
import type { Obj } from '../objects.js';
import { template } from '../pod-template.js';
import { addDaemonSet } from './daemonset.js';
import { addDeployment } from './deployment.js';
import { fieldEnv, hostPathVolume } from './fragments.js';
import type { Workloads } from './workloads.js';

export function addCinderCsi(w: Workloads): void {
  addNodePlugin(w);
  addControllerPlugin(w);
}

/** The cinder-csi-plugin container; node and controller differ in arguments, environment and mounts. */
function pluginContainer(args: string[], env: Obj[], volumeMounts: Obj[], extra: Obj = {}): Obj {
  return {
    args: ['/bin/cinder-csi-plugin', ...args, '--v=1'],
    env: [{ name: 'CSI_ENDPOINT', value: 'unix://csi/csi.sock' }, ...env],
    image: 'registry.k8s.io/provider-os/cinder-csi-plugin:v1.32.0',
    livenessProbe: {
      failureThreshold: 5,
      httpGet: { path: '/healthz', port: 'healthz', scheme: 'HTTP' },
      initialDelaySeconds: 10,
      periodSeconds: 60,
      timeoutSeconds: 10,
    },
    name: 'cinder-csi-plugin',
    ports: [{ containerPort: 9808, name: 'healthz' }],
    volumeMounts,
    ...extra,
  };
}

function addNodePlugin(w: Workloads): void {
  const labels = { app: 'csi-cinder-nodeplugin' };
  addDaemonSet(w, {
    namespace: 'kube-system',
    name: 'csi-cinder-nodeplugin',
    labels,
    selector: labels,
    created: '2025-02-12T14:02:19Z',
    generation: 2,
    updateStrategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 1 }, type: 'RollingUpdate' },
    template: template(labels, {
      containers: [
        {
          args: ['--csi-address=$(ADDRESS)', '--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)'],
          env: [
            { name: 'ADDRESS', value: '/csi/csi.sock' },
            {
              name: 'DRIVER_REG_SOCK_PATH',
              value: '/var/lib/kubelet/plugins/cinder.csi.openstack.org/csi.sock',
            },
            fieldEnv('KUBE_NODE_NAME', 'spec.nodeName'),
          ],
          image: 'registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.12.0',
          name: 'node-driver-registrar',
          volumeMounts: [
            { mountPath: '/csi', name: 'socket-dir' },
            { mountPath: '/registration', name: 'registration-dir' },
          ],
        },
        {
          args: ['--csi-address=/csi/csi.sock'],
          image: 'registry.k8s.io/sig-storage/livenessprobe:v2.14.0',
          name: 'liveness-probe',
          volumeMounts: [{ mountPath: '/csi', name: 'socket-dir' }],
        },
        pluginContainer(
          [
            '--endpoint=$(CSI_ENDPOINT)',
            '--provide-controller-service=false',
            '--cloud-config=$(CLOUD_CONFIG)',
          ],
          [{ name: 'CLOUD_CONFIG', value: '/etc/config/cloud.conf' }],
          [
            { mountPath: '/csi', name: 'socket-dir' },
            { mountPath: '/var/lib/kubelet', mountPropagation: 'Bidirectional', name: 'kubelet-dir' },
            { mountPath: '/dev', mountPropagation: 'HostToContainer', name: 'pods-probe-dir' },
            { mountPath: '/etc/cacert', name: 'cacert', readOnly: true },
            { mountPath: '/etc/config', name: 'secret-cinderplugin', readOnly: true },
          ],
          {
            securityContext: {
              allowPrivilegeEscalation: true,
              capabilities: { add: ['SYS_ADMIN'] },
              privileged: true,
            },
          },
        ),
      ],
      hostNetwork: true,
      serviceAccountName: 'csi-cinder-node-sa',
      tolerations: [{ operator: 'Exists' }],
      volumes: [
        hostPathVolume(
          'socket-dir',
          '/var/lib/kubelet/plugins/cinder.csi.openstack.org',
          'DirectoryOrCreate',
        ),
        hostPathVolume('registration-dir', '/var/lib/kubelet/plugins_registry/', 'Directory'),
        hostPathVolume('kubelet-dir', '/var/lib/kubelet', 'Directory'),
        hostPathVolume('pods-probe-dir', '/dev', 'Directory'),
        { name: 'secret-cinderplugin', secret: { secretName: 'cloud-config' } },
        // The OpenStack API's private CA, dropped on every node by the provisioning playbook.
        hostPathVolume('cacert', '/etc/cacert', 'Directory'),
      ],
    }),
  });
}

/** A CSI sidecar of the controller, talking to the plugin over the shared socket directory. */
function sidecar(name: string, image: string, args: string[]): Obj {
  return {
    args: ['--csi-address=$(ADDRESS)', '--timeout=3m', '--leader-election=true', ...args],
    env: [{ name: 'ADDRESS', value: '/var/lib/csi/sockets/pluginproxy/csi.sock' }],
    image,
    name,
    volumeMounts: [{ mountPath: '/var/lib/csi/sockets/pluginproxy/', name: 'socket-dir' }],
  };
}

function addControllerPlugin(w: Workloads): void {
  const labels = { app: 'csi-cinder-controllerplugin' };
  addDeployment(w, {
    namespace: 'kube-system',
    name: 'csi-cinder-controllerplugin',
    labels,
    selector: labels,
    nodes: ['cp-3'],
    created: '2025-02-12T14:02:19Z',
    podsCreated: '2026-10-14T03:41:55Z',
    revision: 2,
    template: template(labels, {
      containers: [
        sidecar('csi-attacher', 'registry.k8s.io/sig-storage/csi-attacher:v4.7.0', []),
        sidecar('csi-provisioner', 'registry.k8s.io/sig-storage/csi-provisioner:v5.1.0', [
          '--default-fstype=ext4',
          '--feature-gates=Topology=true',
          '--extra-create-metadata',
        ]),
        sidecar('csi-resizer', 'registry.k8s.io/sig-storage/csi-resizer:v1.12.0', [
          '--handle-volume-inuse-error=false',
        ]),
        pluginContainer(
          [
            '--endpoint=$(CSI_ENDPOINT)',
            '--cloud-config=$(CLOUD_CONFIG)',
            '--cluster=$(CLUSTER_NAME)',
            '--provide-node-service=false',
          ],
          [
            { name: 'CLOUD_CONFIG', value: '/etc/kubernetes/cloud.conf' },
            { name: 'CLUSTER_NAME', value: CLUSTER.name },
          ],
          [
            { mountPath: '/csi', name: 'socket-dir' },
            { mountPath: '/etc/kubernetes/cloud.conf', name: 'cloud-config', readOnly: true },
          ],
        ),
      ],
      nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
      serviceAccountName: 'csi-cinder-controller-sa',
      volumes: [
        { emptyDir: {}, name: 'socket-dir' },
        // Written by the provisioning playbook on the control planes; the chart's Secret option is unused.
        hostPathVolume('cloud-config', '/etc/kubernetes/cloud.conf', 'File'),
      ],
    }),
  });
}
