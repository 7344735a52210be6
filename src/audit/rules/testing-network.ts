/**
 * Test builders for the etcd, network, cni, addons, version, talos and endpoint rule tests: a
 * hand-built kubeadm cluster (ClusterConfiguration, static pods, Nodes, add-on objects) small enough
 * to read in a test. The example cluster is src/snapshot/testing-example.ts.
 */
import { deriveFacts } from '../../facts/derive.js';
import type { TargetInput } from '../../facts/target.js';
import type {
  ClusterConfiguration,
  ComponentConfig,
  EtcdState,
  KubeObject,
  Resources,
  Snapshot,
  SnapshotPart,
  StaticPod,
} from '../../snapshot/model.js';
import type { AuditContext, Rule, RuleFinding, RuleResult } from '../rule.js';
import { buildIndex } from '../snapshot-index.js';
import { makeSnapshot, obj } from '../testing.js';

const CC_SOURCE = { kind: 'file' as const, path: 'fixtures/cluster/kubeadm-config.yaml', line: 3 };

export function clusterConfiguration(over: Partial<ClusterConfiguration> = {}): ClusterConfiguration {
  return {
    sourceApiVersion: 'kubeadm.k8s.io/v1beta4',
    source: CC_SOURCE,
    clusterName: 'test',
    kubernetesVersion: 'v1.32.4',
    controlPlaneEndpoint: 'api.test.example:6443',
    featureGates: {},
    networking: { podSubnet: '10.244.0.0/16', serviceSubnet: '10.96.0.0/12', dnsDomain: 'cluster.local' },
    apiServer: { extraArgs: [], extraVolumes: [], certSANs: [] },
    controllerManager: { extraArgs: [], extraVolumes: [] },
    scheduler: { extraArgs: [], extraVolumes: [] },
    etcd: { local: { extraArgs: [], serverCertSANs: [], peerCertSANs: [], dataDir: '/var/lib/etcd' } },
    dns: {},
    unknownFields: [],
    ...over,
  };
}

/** A static pod as the manifests loader produces it; flags as [name, value] pairs, in order. */
export function staticPod(
  component: string,
  node: string,
  flags: [string, string][],
  image = component === 'etcd' ? 'registry.k8s.io/etcd:3.5.26-0' : `registry.k8s.io/${component}:v1.32.4`,
): StaticPod {
  return {
    component,
    node,
    image,
    command: [component, ...flags.map(([n, v]) => `--${n}=${v}`)],
    flags: flags.map(([name, value]) => ({ name, value })),
    hostPathVolumes: [],
    source: { kind: 'file', path: `fixtures/cluster/manifests/${node}/${component}.yaml`, line: 1 },
  };
}

/** The three control-plane static pods kubeadm writes for one node (etcd separately). */
export function controlPlanePods(node: string, ip: string, version = 'v1.32.4'): StaticPod[] {
  return [
    staticPod(
      'kube-apiserver',
      node,
      [
        ['advertise-address', ip],
        ['etcd-servers', 'https://127.0.0.1:2379'],
        ['secure-port', '6443'],
        ['service-cluster-ip-range', '10.96.0.0/12'],
      ],
      `registry.k8s.io/kube-apiserver:${version}`,
    ),
    staticPod(
      'kube-controller-manager',
      node,
      [
        ['cluster-cidr', '10.244.0.0/16'],
        ['service-cluster-ip-range', '10.96.0.0/12'],
        ['cluster-name', 'test'],
      ],
      `registry.k8s.io/kube-controller-manager:${version}`,
    ),
    staticPod(
      'kube-scheduler',
      node,
      [['leader-elect', 'true']],
      `registry.k8s.io/kube-scheduler:${version}`,
    ),
  ];
}

export function etcdPod(
  node: string,
  ip: string,
  extra: [string, string][] = [],
  version = '3.5.26-0',
): StaticPod {
  return staticPod(
    'etcd',
    node,
    [
      ['name', node],
      ['advertise-client-urls', `https://${ip}:2379`],
      ['listen-client-urls', `https://127.0.0.1:2379,https://${ip}:2379`],
      ['listen-metrics-urls', 'http://127.0.0.1:2381'],
      ['data-dir', '/var/lib/etcd'],
      ['snapshot-count', '10000'],
      ...extra,
    ],
    `registry.k8s.io/etcd:${version}`,
  );
}

export function node(
  name: string,
  opts: { ip?: string; controlPlane?: boolean; podCIDR?: string; kubeletVersion?: string } = {},
): KubeObject {
  return obj('Node', name, {
    metadata: {
      name,
      uid: `uid-node-${name}`,
      labels: opts.controlPlane ? { 'node-role.kubernetes.io/control-plane': '' } : {},
    },
    spec: opts.podCIDR ? { podCIDR: opts.podCIDR, podCIDRs: [opts.podCIDR] } : {},
    status: {
      addresses: opts.ip ? [{ type: 'InternalIP', address: opts.ip }] : [],
      nodeInfo: { kubeletVersion: opts.kubeletVersion ?? 'v1.32.4' },
    },
  });
}

export function service(namespace: string, name: string, clusterIP: string): KubeObject {
  return obj('Service', name, { namespace, spec: { clusterIP, clusterIPs: [clusterIP] } });
}

export function configMap(namespace: string, name: string, data: Record<string, string>): KubeObject {
  return obj('ConfigMap', name, { namespace, data });
}

// biome-ignore lint/suspicious/noExplicitAny: pod templates are plain data in tests
type PodSpec = Record<string, any>;

export function daemonSet(
  namespace: string,
  name: string,
  opts: {
    selector?: Record<string, string>;
    podSpec?: PodSpec;
    updateStrategy?: Record<string, unknown>;
    status?: Record<string, unknown>;
    labels?: Record<string, string>;
  } = {},
): KubeObject {
  const selector = opts.selector ?? { 'k8s-app': name };
  return obj('DaemonSet', name, {
    namespace,
    metadata: { name, namespace, uid: `uid-ds-${name}`, labels: opts.labels ?? selector },
    spec: {
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: selector },
        spec: opts.podSpec ?? { containers: [{ name, image: `${name}:1` }] },
      },
      ...(opts.updateStrategy ? { updateStrategy: opts.updateStrategy } : {}),
    },
    ...(opts.status ? { status: opts.status } : {}),
  });
}

export function deployment(
  namespace: string,
  name: string,
  opts: { labels?: Record<string, string>; podSpec?: PodSpec; metadata?: Record<string, unknown> } = {},
): KubeObject {
  const labels = opts.labels ?? { app: name };
  return obj('Deployment', name, {
    namespace,
    metadata: { name, namespace, uid: `uid-deploy-${name}`, labels, ...opts.metadata },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: opts.podSpec ?? { containers: [{ name, image: `${name}:1` }] },
      },
    },
  });
}

export interface ClusterSpec {
  parts?: SnapshotPart[];
  cc?: ClusterConfiguration | null;
  staticPods?: StaticPod[];
  etcd?: EtcdState;
  resources?: Partial<Resources>;
  kubelet?: Record<string, unknown>;
  kubeProxy?: Record<string, unknown>;
}

/**
 * A three-control-plane kubeadm cluster (cp-1..cp-3, 10.0.0.11..13) with one worker, stacked etcd
 * manifests, kube-dns on the 10th service IP and the kubernetes Service on the first. Every part a
 * spec gives replaces the default; parts are derived from what is present unless given.
 */
export function buildSnapshot(spec: ClusterSpec = {}): Snapshot {
  const cps: [string, string][] = [
    ['cp-1', '10.0.0.11'],
    ['cp-2', '10.0.0.12'],
    ['cp-3', '10.0.0.13'],
  ];
  const resources: Partial<Resources> = {
    nodes: [
      ...cps.map(([n, ip], i) => node(n, { ip, controlPlane: true, podCIDR: `10.244.${i}.0/24` })),
      node('worker-1', { ip: '10.0.0.21', podCIDR: '10.244.3.0/24' }),
    ],
    services: [
      service('default', 'kubernetes', '10.96.0.1'),
      service('kube-system', 'kube-dns', '10.96.0.10'),
    ],
    ...spec.resources,
  };
  const staticPods =
    spec.staticPods ?? cps.flatMap(([n, ip]) => [...controlPlanePods(n, ip), etcdPod(n, ip)]);
  const cc = spec.cc === undefined ? clusterConfiguration() : spec.cc;
  const parts: SnapshotPart[] = spec.parts ?? [
    'resources',
    ...(cc ? (['kubeadm'] as const) : []),
    ...(staticPods.length ? (['flags'] as const) : []),
    ...(spec.etcd ? (['etcd'] as const) : []),
    ...(spec.kubelet ? (['kubelet'] as const) : []),
    ...(spec.kubeProxy ? (['kube-proxy'] as const) : []),
  ];
  const s = makeSnapshot({ parts, resources });
  if (cc) s.kubeadm.clusterConfiguration = cc;
  s.staticPods = staticPods;
  if (spec.etcd) s.etcd = spec.etcd;
  if (spec.kubelet) s.kubelet = componentConfig('KubeletConfiguration', spec.kubelet);
  if (spec.kubeProxy) s.kubeProxy = componentConfig('KubeProxyConfiguration', spec.kubeProxy);
  return s;
}

function componentConfig(kind: string, spec: Record<string, unknown>): ComponentConfig {
  return {
    apiVersion:
      kind === 'KubeletConfiguration' ? 'kubelet.config.k8s.io/v1beta1' : 'kubeproxy.config.k8s.io/v1alpha1',
    kind,
    source: { kind: 'file', path: 'fixtures/cluster/kubeadm-config.yaml', line: 40 },
    spec,
  };
}

export function contextOf(snapshot: Snapshot, target: TargetInput = {}): AuditContext {
  const facts = deriveFacts(snapshot, target);
  return { snapshot, facts, target: facts.target, index: buildIndex(snapshot) };
}

/** Runs a rule's check, with the engine's not-applicable gate first. */
export function run(rule: Rule, ctx: AuditContext): RuleResult {
  const na = rule.notApplicable?.(ctx.target);
  if (na !== undefined) return { kind: 'not-applicable', reason: na };
  return rule.check(ctx);
}

/** The findings of a result; fails the test when the rule skipped or did not apply. */
export function findings(result: RuleResult): RuleFinding[] {
  if (!Array.isArray(result)) throw new Error(`expected findings, got ${JSON.stringify(result)}`);
  return result;
}
