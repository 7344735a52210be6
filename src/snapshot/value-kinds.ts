/**
 * Which flags of the control-plane components and which fields of the kubelet and kube-proxy
 * configurations hold which kind of value (values.ts checks each kind). The parsers check every
 * one they meet (static-pods.ts, kubeadm.ts, and validate.ts for a saved snapshot), so a
 * `--service-cluster-ip-range=garbage` stops ferry where it is read, naming file, line and flag,
 * instead of being carried into a Talos patch. Flags not listed here are strings to ferry.
 */
import type { Flag } from './model.js';
import { type Problem, type ValueKind, valueProblem } from './values.js';

const LEADER_ELECTION: Record<string, ValueKind> = {
  'leader-elect-lease-duration': 'duration',
  'leader-elect-renew-deadline': 'duration',
  'leader-elect-retry-period': 'duration',
};

/** component (static pod / kubeadm section) → flag → kind. Durations are the Go time.Duration flags. */
export const FLAG_KINDS: Readonly<Record<string, Readonly<Record<string, ValueKind>>>> = {
  'kube-apiserver': {
    'advertise-address': 'ip',
    'bind-address': 'ip',
    'secure-port': 'port',
    'service-cluster-ip-range': 'cidrs',
    'etcd-servers': 'urls',
    'service-account-jwks-uri': 'url',
    'service-account-issuer': 'issuer',
    'oidc-issuer-url': 'url',
    'external-hostname': 'host',
    'event-ttl': 'duration',
    'request-timeout': 'duration',
    'shutdown-delay-duration': 'duration',
    'shutdown-watch-termination-grace-period': 'duration',
    'livez-grace-period': 'duration',
    'service-account-max-token-expiration': 'duration',
    'kubelet-timeout': 'duration',
    'etcd-compaction-interval': 'duration',
    'etcd-count-metric-poll-period': 'duration',
    'etcd-db-metric-poll-interval': 'duration',
    'etcd-healthcheck-timeout': 'duration',
    'etcd-readycheck-timeout': 'duration',
    'audit-log-batch-max-wait': 'duration',
    'audit-webhook-batch-max-wait': 'duration',
    'audit-webhook-initial-backoff': 'duration',
    'authentication-token-webhook-cache-ttl': 'duration',
    'authorization-webhook-cache-authorized-ttl': 'duration',
    'authorization-webhook-cache-unauthorized-ttl': 'duration',
  },
  'kube-controller-manager': {
    'bind-address': 'ip',
    'secure-port': 'port',
    'cluster-cidr': 'cidrs',
    'service-cluster-ip-range': 'cidrs',
    'node-cidr-mask-size': 'mask-size',
    'node-cidr-mask-size-ipv4': 'mask-size',
    'node-cidr-mask-size-ipv6': 'mask-size',
    'node-monitor-grace-period': 'duration',
    'node-monitor-period': 'duration',
    'node-startup-grace-period': 'duration',
    'pod-eviction-timeout': 'duration',
    'cluster-signing-duration': 'duration',
    'min-resync-period': 'duration',
    'namespace-sync-period': 'duration',
    'pvclaimbinder-sync-period': 'duration',
    'resource-quota-sync-period': 'duration',
    'route-reconciliation-period': 'duration',
    'attach-detach-reconcile-sync-period': 'duration',
    'endpoint-updates-batch-period': 'duration',
    'endpointslice-updates-batch-period': 'duration',
    'horizontal-pod-autoscaler-sync-period': 'duration',
    'horizontal-pod-autoscaler-downscale-stabilization': 'duration',
    'horizontal-pod-autoscaler-cpu-initialization-period': 'duration',
    'horizontal-pod-autoscaler-initial-readiness-delay': 'duration',
    ...LEADER_ELECTION,
  },
  'kube-scheduler': { 'bind-address': 'ip', 'secure-port': 'port', ...LEADER_ELECTION },
  etcd: {
    'listen-client-urls': 'urls',
    'advertise-client-urls': 'urls',
    'listen-peer-urls': 'urls',
    'initial-advertise-peer-urls': 'urls',
    'listen-metrics-urls': 'urls',
  },
  kubelet: {
    'node-ip': 'ips',
    address: 'ip',
    'healthz-bind-address': 'ip',
    'cluster-dns': 'ips',
    'cluster-domain': 'dns-name',
    'node-status-update-frequency': 'duration',
    'runtime-request-timeout': 'duration',
    'streaming-connection-idle-timeout': 'duration',
    'sync-frequency': 'duration',
    'image-minimum-gc-age': 'duration',
    'eviction-pressure-transition-period': 'duration',
  },
};

/** What is wrong with a flag's value for `component`, or undefined (also for flags not listed). */
export function flagProblem(
  component: string,
  flag: Flag,
): { kind: ValueKind; problem: Problem } | undefined {
  const kind = FLAG_KINDS[component]?.[flag.name];
  if (kind === undefined) return undefined;
  // --secure-port=0 turns serving off (kube-controller-manager, kube-scheduler).
  if (kind === 'port' && flag.value.trim() === '0') return undefined;
  const problem = valueProblem(kind, flag.value);
  return problem === undefined ? undefined : { kind, problem };
}

/** A field of a component configuration: its kind, for the value, each list item or each map value. */
export type FieldKind = ValueKind | { list: ValueKind } | { map: ValueKind };

const WEBHOOK_TTLS: Record<string, FieldKind> = {
  'authentication.webhook.cacheTTL': 'duration',
  'authorization.webhook.cacheAuthorizedTTL': 'duration',
  'authorization.webhook.cacheUnauthorizedTTL': 'duration',
};

/** KubeletConfiguration (kubelet.config.k8s.io/v1beta1) fields ferry reads or carries, by dotted path. */
export const KUBELET_CONFIG_KINDS: Readonly<Record<string, FieldKind>> = {
  clusterDNS: { list: 'ip' },
  clusterDomain: 'dns-name',
  address: 'ip',
  healthzBindAddress: 'ip',
  port: 'port',
  readOnlyPort: 'port',
  healthzPort: 'port',
  syncFrequency: 'duration',
  fileCheckFrequency: 'duration',
  httpCheckFrequency: 'duration',
  streamingConnectionIdleTimeout: 'duration',
  nodeStatusUpdateFrequency: 'duration',
  nodeStatusReportFrequency: 'duration',
  imageMinimumGCAge: 'duration',
  imageMaximumGCAge: 'duration',
  volumeStatsAggPeriod: 'duration',
  cpuManagerReconcilePeriod: 'duration',
  runtimeRequestTimeout: 'duration',
  evictionPressureTransitionPeriod: 'duration',
  evictionSoftGracePeriod: { map: 'duration' },
  shutdownGracePeriod: 'duration',
  shutdownGracePeriodCriticalPods: 'duration',
  ...WEBHOOK_TTLS,
};

/** KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) fields ferry reads, by dotted path. */
export const KUBE_PROXY_CONFIG_KINDS: Readonly<Record<string, FieldKind>> = {
  clusterCIDR: 'cidrs',
  bindAddress: 'ip',
  'iptables.syncPeriod': 'duration',
  'iptables.minSyncPeriod': 'duration',
  'ipvs.syncPeriod': 'duration',
  'ipvs.minSyncPeriod': 'duration',
  'conntrack.tcpEstablishedTimeout': 'duration',
  'conntrack.tcpCloseWaitTimeout': 'duration',
};

/** The first field of a component configuration whose value is not of its kind. */
export interface FieldProblem {
  path: (string | number)[];
  kind: ValueKind;
  /** The value as found (a text for the message); only for scalars. */
  value: unknown;
  problem: string;
}

function at(spec: Record<string, unknown>, dotted: string): unknown {
  let cur: unknown = spec;
  for (const part of dotted.split('.')) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function scalarProblem(kind: ValueKind, v: unknown): string | undefined {
  // YAML gives `port: 10250` as a number; durations and addresses are always strings.
  if (typeof v === 'number' && (kind === 'port' || kind === 'mask-size'))
    return valueProblem(kind, String(v));
  if (typeof v !== 'string') return `not ${kind === 'duration' ? 'a duration' : 'a text value'}`;
  return valueProblem(kind, v);
}

/**
 * Checks the fields of `kinds` that `spec` sets. The kind of configuration decides the table:
 * KubeletConfiguration, KubeProxyConfiguration; other kinds are not checked.
 */
export function componentConfigProblem(
  kind: string,
  spec: Record<string, unknown>,
): FieldProblem | undefined {
  const kinds =
    kind === 'KubeletConfiguration'
      ? KUBELET_CONFIG_KINDS
      : kind === 'KubeProxyConfiguration'
        ? KUBE_PROXY_CONFIG_KINDS
        : undefined;
  if (!kinds) return undefined;
  for (const [dotted, fk] of Object.entries(kinds)) {
    const v = at(spec, dotted);
    // Unset, as Go reads it: empty, and 0 for a port (readOnlyPort: 0 turns the port off).
    if (v === undefined || v === null || v === '' || (fk === 'port' && v === 0)) continue;
    const path = dotted.split('.');
    if (typeof fk === 'string') {
      const problem = scalarProblem(fk, v);
      if (problem) return { path, kind: fk, value: v, problem };
    } else if ('list' in fk) {
      if (!Array.isArray(v)) return { path, kind: fk.list, value: v, problem: 'not a list' };
      for (let i = 0; i < v.length; i++) {
        const problem = scalarProblem(fk.list, v[i]);
        if (problem) return { path: [...path, i], kind: fk.list, value: v[i], problem };
      }
    } else {
      if (typeof v !== 'object' || Array.isArray(v))
        return { path, kind: fk.map, value: v, problem: 'not a mapping' };
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const problem = scalarProblem(fk.map, x);
        if (problem) return { path: [...path, k], kind: fk.map, value: x, problem };
      }
    }
  }
  return undefined;
}
