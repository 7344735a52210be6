/** The four static pods of a control plane (/etc/kubernetes/manifests) as kubeadm v1.32 writes them. */
import { CLUSTER, CONTROL_PLANES, type NodeDef } from './cluster.js';
import {
  APISERVER_EXTRA_ARGS,
  APISERVER_EXTRA_VOLUMES,
  CONTROLLER_MANAGER_EXTRA_ARGS,
  ETCD_EXTRA_ARGS,
  SCHEDULER_EXTRA_ARGS,
} from './kubeadm-config.js';
import type { K8s } from './objects.js';
import { CA_VOLUMES, command, hostDir, kubeadmProbes, staticPod } from './static-pod.js';

export const STATIC_COMPONENTS = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'etcd',
] as const;

export type StaticComponent = (typeof STATIC_COMPONENTS)[number];

export function staticManifests(n: NodeDef): Record<StaticComponent, K8s> {
  return {
    'kube-apiserver': apiserverManifest(n),
    'kube-controller-manager': controllerManagerManifest(),
    'kube-scheduler': schedulerManifest(),
    etcd: etcdManifest(n),
  };
}

const image = (component: string) => `registry.k8s.io/${component}:${CLUSTER.kubernetesVersion}`;

function apiserverManifest(n: NodeDef): K8s {
  const port = CLUSTER.endpointPort;
  const defaults: [string, string][] = [
    ['advertise-address', n.ip],
    ['allow-privileged', 'true'],
    ['authorization-mode', 'Node,RBAC'],
    ['client-ca-file', '/etc/kubernetes/pki/ca.crt'],
    ['enable-admission-plugins', 'NodeRestriction'],
    ['enable-bootstrap-token-auth', 'true'],
    ['etcd-cafile', '/etc/kubernetes/pki/etcd/ca.crt'],
    ['etcd-certfile', '/etc/kubernetes/pki/apiserver-etcd-client.crt'],
    ['etcd-keyfile', '/etc/kubernetes/pki/apiserver-etcd-client.key'],
    ['etcd-servers', 'https://127.0.0.1:2379'],
    ['kubelet-client-certificate', '/etc/kubernetes/pki/apiserver-kubelet-client.crt'],
    ['kubelet-client-key', '/etc/kubernetes/pki/apiserver-kubelet-client.key'],
    ['kubelet-preferred-address-types', 'InternalIP,ExternalIP,Hostname'],
    ['proxy-client-cert-file', '/etc/kubernetes/pki/front-proxy-client.crt'],
    ['proxy-client-key-file', '/etc/kubernetes/pki/front-proxy-client.key'],
    ['requestheader-allowed-names', 'front-proxy-client'],
    ['requestheader-client-ca-file', '/etc/kubernetes/pki/front-proxy-ca.crt'],
    ['requestheader-extra-headers-prefix', 'X-Remote-Extra-'],
    ['requestheader-group-headers', 'X-Remote-Group'],
    ['requestheader-username-headers', 'X-Remote-User'],
    ['secure-port', String(port)],
    ['service-account-issuer', CLUSTER.serviceAccountIssuer],
    ['service-account-key-file', '/etc/kubernetes/pki/sa.pub'],
    ['service-account-signing-key-file', '/etc/kubernetes/pki/sa.key'],
    ['service-cluster-ip-range', CLUSTER.serviceSubnet],
    ['tls-cert-file', '/etc/kubernetes/pki/apiserver.crt'],
    ['tls-private-key-file', '/etc/kubernetes/pki/apiserver.key'],
  ];
  return staticPod({
    component: 'kube-apiserver',
    image: image('kube-apiserver'),
    command: command('kube-apiserver', defaults, APISERVER_EXTRA_ARGS),
    volumes: [
      ...CA_VOLUMES,
      hostDir('k8s-certs', '/etc/kubernetes/pki', true),
      ...APISERVER_EXTRA_VOLUMES.map((v) => hostDir(v.name, v.path, v.readOnly)),
    ],
    probes: kubeadmProbes(n.ip, port, 'HTTPS', {
      liveness: '/livez',
      readiness: '/readyz',
      startup: '/livez',
    }),
    requests: { cpu: '250m' },
    annotations: { 'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint': `${n.ip}:${port}` },
  });
}

function controllerManagerManifest(): K8s {
  const kubeconfig = '/etc/kubernetes/controller-manager.conf';
  const defaults: [string, string][] = [
    ['allocate-node-cidrs', 'true'],
    ['authentication-kubeconfig', kubeconfig],
    ['authorization-kubeconfig', kubeconfig],
    ['bind-address', '127.0.0.1'],
    ['client-ca-file', '/etc/kubernetes/pki/ca.crt'],
    ['cluster-cidr', CLUSTER.podSubnet],
    ['cluster-name', CLUSTER.name],
    ['cluster-signing-cert-file', '/etc/kubernetes/pki/ca.crt'],
    ['cluster-signing-key-file', '/etc/kubernetes/pki/ca.key'],
    ['controllers', '*,bootstrapsigner,tokencleaner'],
    ['kubeconfig', kubeconfig],
    ['leader-elect', 'true'],
    ['requestheader-client-ca-file', '/etc/kubernetes/pki/front-proxy-ca.crt'],
    ['root-ca-file', '/etc/kubernetes/pki/ca.crt'],
    ['service-account-private-key-file', '/etc/kubernetes/pki/sa.key'],
    ['service-cluster-ip-range', CLUSTER.serviceSubnet],
    ['use-service-account-credentials', 'true'],
  ];
  return staticPod({
    component: 'kube-controller-manager',
    image: image('kube-controller-manager'),
    command: command('kube-controller-manager', defaults, CONTROLLER_MANAGER_EXTRA_ARGS),
    volumes: [
      ...CA_VOLUMES,
      hostDir('flexvolume-dir', '/usr/libexec/kubernetes/kubelet-plugins/volume/exec'),
      hostDir('k8s-certs', '/etc/kubernetes/pki', true),
      { name: 'kubeconfig', path: kubeconfig, type: 'FileOrCreate', readOnly: true },
    ],
    probes: kubeadmProbes('127.0.0.1', 10257, 'HTTPS', { liveness: '/healthz', startup: '/healthz' }),
    requests: { cpu: '200m' },
  });
}

function schedulerManifest(): K8s {
  const kubeconfig = '/etc/kubernetes/scheduler.conf';
  const defaults: [string, string][] = [
    ['authentication-kubeconfig', kubeconfig],
    ['authorization-kubeconfig', kubeconfig],
    ['bind-address', '127.0.0.1'],
    ['kubeconfig', kubeconfig],
    ['leader-elect', 'true'],
  ];
  return staticPod({
    component: 'kube-scheduler',
    image: image('kube-scheduler'),
    command: command('kube-scheduler', defaults, SCHEDULER_EXTRA_ARGS),
    volumes: [{ name: 'kubeconfig', path: kubeconfig, type: 'FileOrCreate', readOnly: true }],
    probes: kubeadmProbes('127.0.0.1', 10259, 'HTTPS', {
      liveness: '/livez',
      readiness: '/readyz',
      startup: '/livez',
    }),
    requests: { cpu: '100m' },
  });
}

function etcdManifest(n: NodeDef): K8s {
  // Members joined in order; each saw the members before it plus itself (kubeadm join --control-plane).
  const upTo = CONTROL_PLANES.slice(0, CONTROL_PLANES.findIndex((c) => c.name === n.name) + 1);
  const defaults: [string, string][] = [
    ['advertise-client-urls', `https://${n.ip}:2379`],
    ['cert-file', '/etc/kubernetes/pki/etcd/server.crt'],
    ['client-cert-auth', 'true'],
    ['data-dir', '/var/lib/etcd'],
    ['experimental-initial-corrupt-check', 'true'],
    ['experimental-watch-progress-notify-interval', '5s'],
    ['initial-advertise-peer-urls', `https://${n.ip}:2380`],
    ['initial-cluster', upTo.map((c) => `${c.name}=https://${c.ip}:2380`).join(',')],
    ['key-file', '/etc/kubernetes/pki/etcd/server.key'],
    ['listen-client-urls', `https://127.0.0.1:2379,https://${n.ip}:2379`],
    ['listen-metrics-urls', 'http://127.0.0.1:2381'],
    ['listen-peer-urls', `https://${n.ip}:2380`],
    ['name', n.name],
    ['peer-cert-file', '/etc/kubernetes/pki/etcd/peer.crt'],
    ['peer-client-cert-auth', 'true'],
    ['peer-key-file', '/etc/kubernetes/pki/etcd/peer.key'],
    ['peer-trusted-ca-file', '/etc/kubernetes/pki/etcd/ca.crt'],
    ['snapshot-count', '10000'],
    ['trusted-ca-file', '/etc/kubernetes/pki/etcd/ca.crt'],
  ];
  if (upTo.length > 1) defaults.push(['initial-cluster-state', 'existing']);
  return staticPod({
    component: 'etcd',
    image: CLUSTER.etcdImage,
    command: command('etcd', defaults, ETCD_EXTRA_ARGS),
    volumes: [hostDir('etcd-certs', '/etc/kubernetes/pki/etcd'), hostDir('etcd-data', '/var/lib/etcd')],
    probes: kubeadmProbes('127.0.0.1', 2381, 'HTTP', {
      liveness: '/livez',
      readiness: '/readyz',
      startup: '/readyz',
    }),
    requests: { cpu: '100m', memory: '100Mi' },
    annotations: { 'kubeadm.kubernetes.io/etcd.advertise-client-urls': `https://${n.ip}:2379` },
  });
}
