/**
 * The flags kubeadm itself puts on the control-plane static pods. Everything else on a command line
 * was added by the operator (ClusterConfiguration extraArgs or a hand edit) and must be carried over
 * or consciously dropped. Source: kubernetes cmd/kubeadm/app/phases/controlplane/manifests.go
 * (getAPIServerCommand, getControllerManagerCommand, getSchedulerCommand) and
 * cmd/kubeadm/app/phases/etcd/local.go (getEtcdCommand).
 */
import type { Flag } from '../snapshot/model.js';
import type { SnapshotView } from './view.js';

/**
 * A default: the exact value kubeadm writes, or `null` when kubeadm derives it per node or from the
 * configuration (advertise address, ports, CIDRs): then only the name identifies it as kubeadm's.
 */
type Defaults = Record<string, string | null>;

export interface KubeadmContext {
  /** ClusterConfiguration certificatesDir, kubeadm's default /etc/kubernetes/pki when unset. */
  certDir: string;
  /** networking.dnsDomain when known: kubeadm's issuer is https://kubernetes.default.svc.<domain>. */
  dnsDomain?: string;
}

/** Cert dir and DNS domain as kubeadm used them for this cluster. */
export function kubeadmContext(v: SnapshotView): KubeadmContext {
  const ctx: KubeadmContext = { certDir: v.cc?.certificatesDir ?? '/etc/kubernetes/pki' };
  const domain = v.cc?.networking.dnsDomain ?? stringOf(v.snapshot.kubelet?.spec['clusterDomain']);
  if (domain) ctx.dnsDomain = domain.replace(/\.$/, '');
  return ctx;
}

function stringOf(x: unknown): string | undefined {
  return typeof x === 'string' && x !== '' ? x : undefined;
}

export function apiserverDefaults(ctx: KubeadmContext): Defaults {
  const p = (f: string) => `${ctx.certDir}/${f}`;
  return {
    'advertise-address': null,
    'enable-admission-plugins': 'NodeRestriction',
    'service-cluster-ip-range': null,
    'service-account-key-file': p('sa.pub'),
    'service-account-signing-key-file': p('sa.key'),
    'service-account-issuer': ctx.dnsDomain ? `https://kubernetes.default.svc.${ctx.dnsDomain}` : null,
    'client-ca-file': p('ca.crt'),
    'tls-cert-file': p('apiserver.crt'),
    'tls-private-key-file': p('apiserver.key'),
    'kubelet-client-certificate': p('apiserver-kubelet-client.crt'),
    'kubelet-client-key': p('apiserver-kubelet-client.key'),
    'enable-bootstrap-token-auth': 'true',
    'secure-port': null,
    'allow-privileged': 'true',
    'kubelet-preferred-address-types': 'InternalIP,ExternalIP,Hostname',
    'requestheader-username-headers': 'X-Remote-User',
    'requestheader-group-headers': 'X-Remote-Group',
    'requestheader-extra-headers-prefix': 'X-Remote-Extra-',
    'requestheader-client-ca-file': p('front-proxy-ca.crt'),
    'requestheader-allowed-names': 'front-proxy-client',
    'proxy-client-cert-file': p('front-proxy-client.crt'),
    'proxy-client-key-file': p('front-proxy-client.key'),
    // Stacked etcd on loopback; anything else (external etcd) is worth reporting.
    'etcd-servers': null,
    'etcd-cafile': p('etcd/ca.crt'),
    'etcd-certfile': p('apiserver-etcd-client.crt'),
    'etcd-keyfile': p('apiserver-etcd-client.key'),
    'authorization-mode': 'Node,RBAC',
    // Written by kubeadm before Kubernetes 1.24 removed the insecure port.
    'insecure-port': '0',
  };
}

const LOCAL_ETCD_SERVERS = new Set(['https://127.0.0.1:2379', 'https://[::1]:2379']);
/** kubeadm writes etcd's metrics listener on loopback; anything else was the operator's choice. */
export const KUBEADM_METRICS_URLS: ReadonlySet<string> = new Set([
  'http://127.0.0.1:2381',
  'http://[::1]:2381',
]);

export function controllerManagerDefaults(ctx: KubeadmContext): Defaults {
  const p = (f: string) => `${ctx.certDir}/${f}`;
  const kubeconfig = '/etc/kubernetes/controller-manager.conf';
  return {
    'bind-address': '127.0.0.1',
    'leader-elect': 'true',
    kubeconfig,
    'authentication-kubeconfig': kubeconfig,
    'authorization-kubeconfig': kubeconfig,
    'client-ca-file': p('ca.crt'),
    'requestheader-client-ca-file': p('front-proxy-ca.crt'),
    'root-ca-file': p('ca.crt'),
    'service-account-private-key-file': p('sa.key'),
    'cluster-signing-cert-file': p('ca.crt'),
    'cluster-signing-key-file': p('ca.key'),
    'use-service-account-credentials': 'true',
    controllers: '*,bootstrapsigner,tokencleaner',
    'allocate-node-cidrs': 'true',
    'cluster-cidr': null,
    'service-cluster-ip-range': null,
    'cluster-name': null,
    // Older kubeadm releases (before 1.22) also wrote this.
    port: '0',
  };
}

export function schedulerDefaults(): Defaults {
  const kubeconfig = '/etc/kubernetes/scheduler.conf';
  return {
    'bind-address': '127.0.0.1',
    'leader-elect': 'true',
    kubeconfig,
    'authentication-kubeconfig': kubeconfig,
    'authorization-kubeconfig': kubeconfig,
    port: '0',
  };
}

export function etcdDefaults(ctx: KubeadmContext): Defaults {
  const p = (f: string) => `${ctx.certDir}/etcd/${f}`;
  return {
    name: null,
    'advertise-client-urls': null,
    'listen-client-urls': null,
    'listen-peer-urls': null,
    'initial-advertise-peer-urls': null,
    'initial-cluster': null,
    'initial-cluster-state': null,
    'data-dir': null,
    'listen-metrics-urls': null,
    'cert-file': p('server.crt'),
    'key-file': p('server.key'),
    'trusted-ca-file': p('ca.crt'),
    'client-cert-auth': 'true',
    'peer-cert-file': p('peer.crt'),
    'peer-key-file': p('peer.key'),
    'peer-trusted-ca-file': p('ca.crt'),
    'peer-client-cert-auth': 'true',
    'snapshot-count': '10000',
    'experimental-initial-corrupt-check': 'true',
    'experimental-watch-progress-notify-interval': '5s',
    // kubeadm for etcd 3.6 writes the feature-gate form of the corrupt check.
    'feature-gates': null,
  };
}

/**
 * The flags that kubeadm did not write: anything whose name kubeadm does not set, a second occurrence
 * of a flag kubeadm sets once, or a kubeadm flag whose constant value was changed. Order is kept.
 */
export function nonDefaultFlags(flags: Flag[], defaults: Defaults): Flag[] {
  const seen = new Set<string>();
  const out: Flag[] = [];
  for (const f of flags) {
    const first = !seen.has(f.name);
    seen.add(f.name);
    if (!Object.hasOwn(defaults, f.name) || !first) {
      out.push(f);
      continue;
    }
    const expected = defaults[f.name];
    if (f.name === 'etcd-servers') {
      if (!LOCAL_ETCD_SERVERS.has(f.value)) out.push(f);
      continue;
    }
    // Scrapers depend on a non-loopback metrics listener: it is carried like any operator flag.
    if (f.name === 'listen-metrics-urls') {
      if (!KUBEADM_METRICS_URLS.has(f.value)) out.push(f);
      continue;
    }
    if (expected !== null && expected !== undefined && f.value !== expected) out.push(f);
  }
  return out;
}

/** Flags as an order-insensitive multiset key, for comparing two flag lists. */
export function flagSetKey(flags: Flag[]): string {
  return flags
    .map((f) => `${f.name}=${f.value}`)
    .sort()
    .join('\n');
}
