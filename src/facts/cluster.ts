/** Cluster identity: name, Kubernetes version, control-plane endpoint. */
import { parse as parseYaml } from 'yaml';
import type { KubeObject, SourceRef } from '../snapshot/model.js';
import { placeOf } from '../snapshot/places.js';
import { endpointProblem } from '../snapshot/values.js';
import { canonicalIp, joinHostPort, parseHostPort, parseIp } from '../util/ip.js';
import { compareVersionText, imageTag, normalizeKubernetesVersion, parseVersion } from '../util/semver.js';
import { podCandidates, runningBeatsDeclared } from './components.js';
import { decide } from './decide.js';
import type { Candidate, ClusterFacts, Endpoint } from './model.js';
import { atField, badValueError, derivedRef, flagRef, objectRef } from './sources.js';
import { lastFlag, type SnapshotView } from './view.js';

export function deriveClusterFacts(v: SnapshotView): ClusterFacts {
  return { name: clusterName(v), kubernetesVersion: kubernetesVersion(v), controlPlaneEndpoint: endpoint(v) };
}

function clusterName(v: SnapshotView) {
  const candidates: Candidate<string>[] = podCandidates(v.controllerManagers, 'cluster-name', (f) =>
    lastFlag(f, 'cluster-name'),
  );
  if (v.cc?.clusterName)
    candidates.push({ value: v.cc.clusterName, source: atField(v.cc.source, 'clusterName') });
  return decide({
    key: 'cluster.name',
    title: 'cluster name',
    candidates,
    reason: runningBeatsDeclared('kube-controller-manager --cluster-name'),
    missing:
      'kubeadm-config.yaml with a ClusterConfiguration (clusterName), or the kube-controller-manager manifest (--cluster-name)',
  });
}

/**
 * The server's own answer (GET /version) first, then the running apiserver images, then what kubeadm
 * recorded; any disagreement between them is shown, never resolved silently.
 */
function kubernetesVersion(v: SnapshotView) {
  const served: Candidate<string>[] = [];
  const sv = v.snapshot.serverVersion;
  if (sv && parseVersion(sv.info.gitVersion)) {
    served.push({
      value: normalizeKubernetesVersion(sv.info.gitVersion),
      source: atField(sv.source, 'gitVersion'),
    });
  }
  const images: Candidate<string>[] = [];
  for (const pod of v.apiservers) {
    const tag = pod.image ? imageTag(pod.image) : undefined;
    if (tag && parseVersion(tag)) {
      images.push({
        value: normalizeKubernetesVersion(tag),
        source: derivedRef(`image tag of ${pod.image}`, [atField(pod.source, 'image')]),
      });
    }
  }
  const running = [...served, ...images];
  const candidates = [...running];
  if (v.cc?.kubernetesVersion) {
    candidates.push({
      value: normalizeKubernetesVersion(v.cc.kubernetesVersion),
      source: atField(v.cc.source, 'kubernetesVersion'),
    });
  }
  const imagesDiffer = new Set(images.map((c) => c.value)).size > 1;
  const lowest = (pool: Candidate<string>[]) =>
    [...pool].sort((a, b) => compareVersionText(a.value, b.value))[0];
  return decide({
    key: 'cluster.kubernetesVersion',
    title: 'Kubernetes version (control plane)',
    candidates,
    // The oldest running apiserver bounds what every version window must accept; /version is
    // answered by whichever apiserver the endpoint reached, so it is one of them, not all.
    believe: (cs) => (imagesDiffer ? lowest(running) : (served[0] ?? images[0])) ?? cs[0]!,
    reason: imagesDiffer
      ? 'the control planes run different kube-apiserver versions (an upgrade in progress?); ferry believes the ' +
        'lowest, because version windows and skew rules must hold for every control plane (GET /version is ' +
        'answered by one of them)'
      : served.length > 0
        ? 'ferry believes GET /version, what the running kube-apiserver says it is; an image tag is only a name, ' +
          "and kubeadm-config's kubernetesVersion is what the last kubeadm init/upgrade recorded"
        : "ferry believes the running kube-apiserver image; kubeadm-config's kubernetesVersion is what the last " +
          'kubeadm init/upgrade recorded',
    missing:
      'a live snapshot (ferry snapshot --kubeconfig records GET /version), the kube-apiserver manifest (its image tag) ' +
      'or kubeadm-config.yaml with a ClusterConfiguration (kubernetesVersion)',
  });
}

// ---------------------------------------------------------------------------------------------
// Endpoint

function endpoint(v: SnapshotView) {
  const candidates: Candidate<Endpoint>[] = [];
  const declared = v.cc?.controlPlaneEndpoint;
  if (v.cc && declared) {
    const parsed = parseHostPort(declared);
    if (parsed) {
      const source = atField(v.cc.source, 'controlPlaneEndpoint');
      if (parsed.port !== undefined) {
        candidates.push({ value: makeEndpoint(v, parsed.host, parsed.port, 'kubeadm'), source });
      } else {
        // kubeadm appends the API server bind port when the endpoint has none.
        const port = bindPort(v);
        candidates.push({
          value: makeEndpoint(v, parsed.host, port.port, 'kubeadm'),
          source: derivedRef(`controlPlaneEndpoint has no port; kubeadm uses ${port.from}`, [
            source,
            ...port.refs,
          ]),
        });
      }
    }
  }
  const info = v.configMap('kube-public', 'cluster-info');
  const infoRef = info && objectRef(info, 'data.kubeconfig clusters[0].cluster.server');
  const fromInfo = info && infoRef ? kubeconfigServer(info, 'kubeconfig', infoRef) : undefined;
  if (infoRef && fromInfo) {
    candidates.push({
      value: makeEndpoint(v, fromInfo.host, fromInfo.port, 'cluster-info'),
      source: infoRef,
    });
  }
  const proxy = v.configMap('kube-system', 'kube-proxy');
  const proxyRef = proxy && objectRef(proxy, 'data["kubeconfig.conf"] clusters[0].cluster.server');
  const fromProxy = proxy && proxyRef ? kubeconfigServer(proxy, 'kubeconfig.conf', proxyRef) : undefined;
  if (proxyRef && fromProxy) {
    candidates.push({
      value: makeEndpoint(v, fromProxy.host, fromProxy.port, 'kube-proxy'),
      source: proxyRef,
    });
  }
  return decide({
    key: 'cluster.controlPlaneEndpoint',
    title: 'control-plane endpoint',
    candidates,
    equals: (a, b) => a.host.toLowerCase() === b.host.toLowerCase() && a.port === b.port,
    reason:
      "ferry believes kubeadm-config's controlPlaneEndpoint: kubeadm issued certificates and kubeconfigs for it; " +
      'cluster-info and the kube-proxy kubeconfig are copies made at init time that were not updated',
    missing:
      'kubeadm-config.yaml with ClusterConfiguration controlPlaneEndpoint, or resources with ConfigMap kube-public/cluster-info',
  });
}

function bindPort(v: SnapshotView): { port: number; from: string; refs: SourceRef[] } {
  for (const pod of v.apiservers) {
    const p = Number(lastFlag(pod.flags, 'secure-port'));
    if (Number.isInteger(p) && p > 0)
      return { port: p, from: `--secure-port ${p}`, refs: [flagRef(pod, 'secure-port')] };
  }
  for (const nc of v.snapshot.kubeadm.nodeConfigurations) {
    const p = nc.localAPIEndpoint?.bindPort;
    if (p)
      return {
        port: p,
        from: `localAPIEndpoint.bindPort ${p}`,
        refs: [atField(nc.source, 'localAPIEndpoint.bindPort')],
      };
  }
  return { port: 6443, from: "kubeadm's default bind port 6443", refs: [] };
}

function kubeconfigServer(
  cm: KubeObject,
  key: string,
  ref: SourceRef,
): { host: string; port: number } | undefined {
  const text = cm.data?.[key];
  if (typeof text !== 'string') return undefined;
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch {
    return undefined;
  }
  const server = (doc as { clusters?: { cluster?: { server?: unknown } }[] } | null)?.clusters?.[0]?.cluster
    ?.server;
  if (typeof server !== 'string') return undefined;
  // A copy of the endpoint, but the kit may take it from here: a bad one is refused, not skipped.
  const problem = endpointProblem(server);
  if (problem) throw badValueError(ref, server, problem, placeOf(cm));
  const hp = parseHostPort(server);
  if (!hp) return undefined;
  // An https URL without a port means 443.
  return { host: hp.host, port: hp.port ?? 443 };
}

function makeEndpoint(v: SnapshotView, host: string, port: number, from: Endpoint['from']): Endpoint {
  const h = parseIp(host) ? canonicalIp(host) : host;
  const url = `https://${joinHostPort(h, port)}`;
  return { host: h, port, url, node: nodeWithAddress(v, h), from };
}

/** The control-plane node that owns an address (or is named like the host): the endpoint is not a VIP/LB. */
function nodeWithAddress(v: SnapshotView, host: string): string | null {
  const wanted = host.toLowerCase();
  for (const name of v.controlPlaneLabelled) {
    if (name.toLowerCase() === wanted) return name;
    const node = v.nodesByName.get(name);
    const addresses: { address?: string }[] = node?.status?.addresses ?? [];
    if (
      addresses.some((a) => typeof a.address === 'string' && canonicalIp(a.address).toLowerCase() === wanted)
    ) {
      return name;
    }
  }
  for (const pod of v.apiservers) {
    const adv = lastFlag(pod.flags, 'advertise-address');
    if (pod.node && adv && canonicalIp(adv) === wanted) return pod.node;
  }
  return null;
}
