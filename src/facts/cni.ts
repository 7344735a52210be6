/**
 * CNI (which plugin; Cilium's kube-proxy replacement, API server address, IPAM, agent rollout) and
 * kube-proxy (DaemonSet presence, selector, mode). Talos's create-if-missing add-ons make both
 * blockers when they differ (blockers.md cni.*, addons.*).
 */
import type { KubeObject } from '../snapshot/model.js';
import { hostProblem, portProblem } from '../snapshot/values.js';
import { cidrList } from '../util/ip.js';
import { imageTag } from '../util/semver.js';
import { decide, known, missingFact } from './decide.js';
import type {
  Candidate,
  CiliumIpam,
  CniFacts,
  CniPlugin,
  DaemonSetFact,
  Fact,
  KubeProxyFacts,
  UpdateStrategy,
} from './model.js';
import { atField, badValueError, derivedRef, listingRef, objectRef } from './sources.js';
import type { SnapshotView } from './view.js';

const NO_RESOURCES =
  'resources/ with the DaemonSets and ConfigMaps of kube-system (kubectl get ds,cm -n kube-system -o yaml)';

/** DaemonSet names that identify a CNI, in the order ferry believes them when several exist. */
const CNI_DAEMONSETS: { name: string; plugin: CniPlugin }[] = [
  { name: 'cilium', plugin: 'cilium' },
  { name: 'calico-node', plugin: 'calico' },
  { name: 'canal', plugin: 'canal' },
  { name: 'kube-flannel-ds', plugin: 'flannel' },
  { name: 'kube-flannel', plugin: 'flannel' },
  { name: 'weave-net', plugin: 'weave' },
  { name: 'kube-router', plugin: 'kube-router' },
  { name: 'antrea-agent', plugin: 'antrea' },
];

export function daemonSetFact(ds: KubeObject): DaemonSetFact {
  const strategy = ds.spec?.updateStrategy ?? {};
  const rolling = strategy.rollingUpdate ?? {};
  const updateStrategy: UpdateStrategy = {
    // The API default for DaemonSets is RollingUpdate with maxUnavailable 1.
    type: typeof strategy.type === 'string' ? strategy.type : 'RollingUpdate',
    maxUnavailable: rolling.maxUnavailable ?? null,
    maxSurge: rolling.maxSurge ?? null,
  };
  const containers: { image?: unknown }[] = ds.spec?.template?.spec?.containers ?? [];
  const image = containers.find((c) => typeof c.image === 'string')?.image;
  return {
    namespace: ds.metadata.namespace ?? '',
    name: ds.metadata.name,
    image: typeof image === 'string' ? image : null,
    selector: ds.spec?.selector?.matchLabels ?? {},
    updateStrategy,
  };
}

export function deriveCniFacts(v: SnapshotView): CniFacts {
  const agent = ciliumAgentObject(v);
  const config = v.configMap('kube-system', 'cilium-config');
  const plugin = pluginFact(v, config);
  const isCilium = plugin.value === 'cilium';
  const notCilium = (key: string, title: string) =>
    plugin.value === undefined
      ? missingFact<null>(key, title, NO_RESOURCES)
      : known<null>(key, title, null, plugin.provenance, 'Cilium is not the CNI');
  const data: Record<string, unknown> = config?.data ?? {};
  const cfg = (key: string, title: string, dataKey: string): Fact<string | null> => {
    if (!isCilium) return notCilium(key, title);
    if (!config) return missingFact(key, title, 'ConfigMap kube-system/cilium-config in resources/');
    const val = data[dataKey];
    return typeof val === 'string'
      ? known(key, title, val, [objectRef(config, `data["${dataKey}"]`)])
      : known<string | null>(
          key,
          title,
          null,
          [objectRef(config, 'data')],
          `cilium-config has no ${dataKey}`,
        );
  };
  return {
    plugin,
    ciliumAgent:
      isCilium && agent
        ? known('cni.ciliumAgent', 'Cilium agent DaemonSet', daemonSetFact(agent), [objectRef(agent)])
        : isCilium
          ? missingFact(
              'cni.ciliumAgent',
              'Cilium agent DaemonSet',
              'DaemonSet cilium (label k8s-app=cilium) in resources/',
            )
          : notCilium('cni.ciliumAgent', 'Cilium agent DaemonSet'),
    ciliumVersion: ciliumVersion(isCilium, agent, notCilium),
    ciliumKubeProxyReplacement: cfg(
      'cni.ciliumKubeProxyReplacement',
      'Cilium kube-proxy replacement',
      'kube-proxy-replacement',
    ),
    ciliumK8sServiceHost: apiAddress(isCilium, config, agent, 'host', notCilium),
    ciliumK8sServicePort: apiAddress(isCilium, config, agent, 'port', notCilium),
    ciliumIpam: ipam(isCilium, config, notCilium),
  };
}

function ciliumAgentObject(v: SnapshotView): KubeObject | undefined {
  const direct = v.daemonSet('kube-system', 'cilium');
  if (direct) return direct;
  // Cilium installed into another namespace keeps the DaemonSet name and k8s-app label.
  return v.daemonSets.find(
    (d) => d.metadata.name === 'cilium' || d.metadata.labels?.['k8s-app'] === 'cilium',
  );
}

function pluginFact(v: SnapshotView, ciliumConfig: KubeObject | undefined): Fact<CniPlugin> {
  const key = 'cni.plugin';
  const title = 'CNI plugin';
  if (!v.hasResources) return missingFact(key, title, NO_RESOURCES);
  const candidates: Candidate<CniPlugin>[] = [];
  const byName = new Map<string, KubeObject[]>();
  for (const ds of v.daemonSets) {
    const list = byName.get(ds.metadata.name) ?? [];
    list.push(ds);
    byName.set(ds.metadata.name, list);
  }
  for (const { name, plugin } of CNI_DAEMONSETS) {
    for (const ds of byName.get(name) ?? []) {
      if (!candidates.some((c) => c.value === plugin))
        candidates.push({ value: plugin, source: objectRef(ds) });
    }
  }
  if (ciliumConfig && !candidates.some((c) => c.value === 'cilium')) {
    candidates.push({ value: 'cilium', source: objectRef(ciliumConfig) });
  }
  if (candidates.length === 0) {
    return known(key, title, 'none-detected', [
      derivedRef(
        `none of the known CNI DaemonSets (${CNI_DAEMONSETS.map((c) => c.name).join(', ')}) exists`,
        [listingRef(v.snapshot, 'DaemonSet')],
      ),
    ]);
  }
  return decide({
    key,
    title,
    candidates,
    reason:
      'more than one CNI is deployed (chaining, or a leftover from a CNI change); ferry believes the first in its ' +
      'order (cilium, calico, canal, flannel, weave, kube-router, antrea) — remove the leftover or confirm the chaining',
    missing: NO_RESOURCES,
  });
}

function ciliumVersion(
  isCilium: boolean,
  agent: KubeObject | undefined,
  notCilium: (k: string, t: string) => Fact<null>,
): Fact<string | null> {
  const key = 'cni.ciliumVersion';
  const title = 'Cilium version (agent image tag)';
  if (!isCilium) return notCilium(key, title);
  const image = agent ? daemonSetFact(agent).image : null;
  const tag = image ? imageTag(image) : undefined;
  if (!agent || !tag)
    return missingFact(key, title, 'DaemonSet cilium with its container image in resources/');
  return known(key, title, tag.replace(/^v/, ''), [
    objectRef(agent, 'spec.template.spec.containers[0].image'),
  ]);
}

/** k8sServiceHost/Port: cilium-config (Cilium ≥ 1.16) or the agent's KUBERNETES_SERVICE_* env (older charts). */
function apiAddress(
  isCilium: boolean,
  config: KubeObject | undefined,
  agent: KubeObject | undefined,
  which: 'host' | 'port',
  notCilium: (k: string, t: string) => Fact<null>,
): Fact<string | null> {
  const key = which === 'host' ? 'cni.ciliumK8sServiceHost' : 'cni.ciliumK8sServicePort';
  const title = which === 'host' ? 'Cilium k8sServiceHost' : 'Cilium k8sServicePort';
  if (!isCilium) return notCilium(key, title);
  const candidates: Candidate<string | null>[] = [];
  const dataKey = which === 'host' ? 'k8s-service-host' : 'k8s-service-port';
  const fromConfig = config?.data?.[dataKey];
  if (config && typeof fromConfig === 'string' && fromConfig !== '') {
    candidates.push({ value: fromConfig, source: objectRef(config, `data["${dataKey}"]`) });
  }
  const envName = which === 'host' ? 'KUBERNETES_SERVICE_HOST' : 'KUBERNETES_SERVICE_PORT';
  const containers: { name?: string; env?: { name?: string; value?: unknown }[] }[] =
    agent?.spec?.template?.spec?.containers ?? [];
  for (const c of containers) {
    const env = c.env?.find((e) => e.name === envName);
    if (agent && env && typeof env.value === 'string') {
      const source = objectRef(agent, `spec.template.spec.containers[${c.name ?? '?'}].env.${envName}`);
      // Carried into the kit's Cilium values: an address or port that is none is refused here.
      const problem = which === 'host' ? hostProblem(env.value) : portProblem(env.value);
      if (problem) throw badValueError(source, env.value, problem);
      candidates.push({ value: env.value, source });
      break;
    }
  }
  if (candidates.length === 0) {
    if (!config && !agent)
      return missingFact(
        key,
        title,
        'ConfigMap kube-system/cilium-config and DaemonSet cilium in resources/',
      );
    const from = [config, agent].filter((o): o is KubeObject => o !== undefined).map((o) => objectRef(o));
    return known<string | null>(
      key,
      title,
      null,
      from,
      'not set: Cilium reaches the API through the kubernetes Service (needs kube-proxy or its own replacement running)',
    );
  }
  return decide({
    key,
    title,
    candidates,
    reason:
      `cilium-config ${dataKey} and the agent's ${envName} differ; ferry believes cilium-config (the Helm-managed value) — ` +
      'check which one your Cilium version reads',
    missing: '',
  });
}

function ipam(
  isCilium: boolean,
  config: KubeObject | undefined,
  notCilium: (k: string, t: string) => Fact<null>,
): Fact<CiliumIpam | null> {
  const key = 'cni.ciliumIpam';
  const title = 'Cilium IPAM';
  if (!isCilium) return notCilium(key, title);
  if (!config) return missingFact(key, title, 'ConfigMap kube-system/cilium-config in resources/');
  const data: Record<string, unknown> = config.data ?? {};
  const mode = typeof data['ipam'] === 'string' ? data['ipam'] : undefined;
  const pool = typeof data['cluster-pool-ipv4-cidr'] === 'string' ? data['cluster-pool-ipv4-cidr'] : '';
  const pool6 = typeof data['cluster-pool-ipv6-cidr'] === 'string' ? data['cluster-pool-ipv6-cidr'] : '';
  const mask = Number(data['cluster-pool-ipv4-mask-size']);
  const value: CiliumIpam = {
    mode: mode ?? 'cluster-pool',
    clusterPoolCIDRs: [...cidrList(pool.replace(/\s+/g, ',')), ...cidrList(pool6.replace(/\s+/g, ','))],
    clusterPoolMaskSize: Number.isInteger(mask) && mask > 0 ? mask : null,
  };
  const notes: string[] = [];
  if (!mode) notes.push("cilium-config has no ipam: Cilium's default cluster-pool applies");
  if (value.mode === 'cluster-pool')
    notes.push('pod IPs come from the Cilium pool, not from Node.spec.podCIDR');
  return known(
    key,
    title,
    value,
    [objectRef(config, 'data')],
    notes.length > 0 ? notes.join('; ') : undefined,
  );
}

// ---------------------------------------------------------------------------------------------
// kube-proxy

export function deriveKubeProxyFacts(v: SnapshotView): KubeProxyFacts {
  const ds = v.daemonSet('kube-system', 'kube-proxy');
  const daemonSet: Fact<DaemonSetFact | null> = !v.hasResources
    ? missingFact('kubeProxy.daemonSet', 'kube-proxy DaemonSet', NO_RESOURCES)
    : ds
      ? known('kubeProxy.daemonSet', 'kube-proxy DaemonSet', daemonSetFact(ds), [objectRef(ds)])
      : known<DaemonSetFact | null>('kubeProxy.daemonSet', 'kube-proxy DaemonSet', null, [
          derivedRef('no DaemonSet kube-system/kube-proxy in the snapshot', [
            listingRef(v.snapshot, 'DaemonSet'),
          ]),
        ]);
  return { daemonSet, mode: mode(v, daemonSet) };
}

function mode(v: SnapshotView, daemonSet: Fact<DaemonSetFact | null>): Fact<string | null> {
  const key = 'kubeProxy.mode';
  const title = 'kube-proxy mode';
  const cfg = v.snapshot.kubeProxy;
  if (daemonSet.value === null) {
    return known<string | null>(
      key,
      title,
      null,
      daemonSet.provenance,
      cfg
        ? 'a KubeProxyConfiguration exists but no kube-proxy DaemonSet runs it'
        : 'kube-proxy is not deployed',
    );
  }
  if (!cfg) {
    return missingFact(
      key,
      title,
      'ConfigMap kube-system/kube-proxy (data["config.conf"]) or a KubeProxyConfiguration in kubeadm-config.yaml',
    );
  }
  const raw = cfg.spec['mode'];
  const source = atField(cfg.source, 'mode');
  const note =
    daemonSet.value === undefined
      ? 'whether a kube-proxy DaemonSet runs is unknown (no resources)'
      : undefined;
  if (typeof raw === 'string' && raw !== '') return known(key, title, raw, [source], note);
  return known(
    key,
    title,
    'iptables',
    [derivedRef('mode is empty: kube-proxy on Linux defaults to iptables', [source])],
    note,
  );
}
