/**
 * Nodes: control planes (with advertise addresses, taints and their etcd member), workers, and the
 * kubelet versions in the fleet. One pass over the Node list.
 */
import type { KubeObject, SourceRef, StaticPod, Taint } from '../snapshot/model.js';
import { endpointProblem, ipProblem } from '../snapshot/values.js';
import { compareVersionText } from '../util/semver.js';
import { known, missingFact } from './decide.js';
import type {
  ControlPlaneNodeFact,
  EtcdMemberFact,
  Fact,
  NodeFact,
  NodesFacts,
  VersionCount,
} from './model.js';
import { atField, badValueError, derivedRef, flagRef, listingRef, objectRef } from './sources.js';
import { CONTROL_PLANE_LABEL, LEGACY_MASTER_LABEL, lastFlag, type SnapshotView } from './view.js';

const NO_NODES = 'resources/ with the Node objects (kubectl get nodes -o yaml)';

export function deriveNodesFacts(v: SnapshotView, members: Fact<EtcdMemberFact[]>): NodesFacts {
  return { controlPlane: controlPlane(v, members), workers: workers(v), kubeletVersions: kubeletVersions(v) };
}

export function nodeFact(node: KubeObject): NodeFact {
  const addresses: { type?: unknown; address?: unknown }[] = node.status?.addresses ?? [];
  const clean = addresses
    .filter((a) => typeof a.type === 'string' && typeof a.address === 'string')
    .map((a) => ({ type: a.type as string, address: a.address as string }));
  const podCIDRs: unknown = node.spec?.podCIDRs ?? (node.spec?.podCIDR ? [node.spec.podCIDR] : []);
  return {
    name: node.metadata.name,
    internalIP: clean.find((a) => a.type === 'InternalIP')?.address ?? null,
    addresses: clean,
    labels: node.metadata.labels ?? {},
    taints: Array.isArray(node.spec?.taints) ? (node.spec.taints as Taint[]) : [],
    unschedulable: node.spec?.unschedulable === true,
    kubeletVersion:
      typeof node.status?.nodeInfo?.kubeletVersion === 'string' ? node.status.nodeInfo.kubeletVersion : null,
    podCIDRs: Array.isArray(podCIDRs) ? podCIDRs.filter((c): c is string => typeof c === 'string') : [],
    providerID: typeof node.spec?.providerID === 'string' ? node.spec.providerID : null,
  };
}

function isControlPlaneTaint(t: Taint): boolean {
  return (
    (t.key === CONTROL_PLANE_LABEL || t.key === LEGACY_MASTER_LABEL) &&
    (t.effect === 'NoSchedule' || t.effect === 'NoExecute')
  );
}

function controlPlane(v: SnapshotView, members: Fact<EtcdMemberFact[]>): Fact<ControlPlaneNodeFact[]> {
  const key = 'nodes.controlPlane';
  const title = 'control-plane nodes';
  const apiserverByNode = new Map<string, StaticPod>();
  for (const p of v.apiservers) if (p.node) apiserverByNode.set(p.node, p);
  const names = [...v.controlPlaneLabelled];
  const seen = new Set(names);
  for (const p of [...v.apiservers, ...v.etcds]) {
    if (p.node && !seen.has(p.node)) {
      seen.add(p.node);
      names.push(p.node);
    }
  }
  if (names.length === 0) {
    return missingFact(
      key,
      title,
      `${NO_NODES} (labelled ${CONTROL_PLANE_LABEL}), or manifests/NODE/ per control plane`,
    );
  }
  const memberByNode = new Map<string, EtcdMemberFact>();
  for (const m of members.value ?? []) if (m.node) memberByNode.set(m.node, m);

  const provenance: SourceRef[] = [];
  const value = names.map((name): ControlPlaneNodeFact => {
    const node = v.nodesByName.get(name);
    const base: NodeFact = node
      ? nodeFact(node)
      : {
          name,
          internalIP: null,
          addresses: [],
          labels: {},
          taints: [],
          unschedulable: false,
          kubeletVersion: null,
          podCIDRs: [],
          providerID: null,
        };
    if (node) provenance.push(objectRef(node));
    const pod = apiserverByNode.get(name);
    if (pod) provenance.push(pod.source);
    const port = pod ? Number(lastFlag(pod.flags, 'secure-port')) : Number.NaN;
    const member = memberByNode.get(name);
    return {
      ...base,
      tainted: base.taints.some(isControlPlaneTaint),
      advertiseAddress: advertiseAddress(v, name, pod, base),
      apiserverPort: Number.isInteger(port) && port > 0 ? port : bindPortFor(v, name),
      hasApiserver: pod !== undefined,
      etcdMember: member ? { id: member.id, name: member.name, isLearner: member.isLearner } : null,
      hasNodeObject: node !== undefined,
    };
  });
  const note =
    v.apiservers.length > 0 && v.apiservers.every((p) => !p.node)
      ? 'the kube-apiserver manifests do not say which node they came from; per-node addresses come from Node objects'
      : undefined;
  return known(key, title, value, provenance, note);
}

/**
 * Where this control plane's apiserver advertises itself: its --advertise-address, else the kubeadm
 * annotation on its mirror pod, else a kubeadm Init/JoinConfiguration for this node, else the Node's
 * InternalIP (kubeadm advertises the address of the default route, which is normally that one).
 */
function advertiseAddress(
  v: SnapshotView,
  name: string,
  pod: StaticPod | undefined,
  node: NodeFact,
): ControlPlaneNodeFact['advertiseAddress'] {
  const flag = pod ? lastFlag(pod.flags, 'advertise-address') : undefined;
  if (pod && flag) return { address: flag, source: flagRef(pod, 'advertise-address') };
  const ann = v.advertiseAnnotations.get(name);
  if (ann) {
    const source = objectRef(
      ann.pod,
      'metadata.annotations["kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"]',
    );
    const host = ann.value.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
    // kubeadm writes ADDRESS:PORT here; the address is what the node advertises.
    const problem = endpointProblem(ann.value) ?? ipProblem(host);
    if (problem) throw badValueError(source, ann.value, problem);
    return { address: host, source };
  }
  for (const nc of v.snapshot.kubeadm.nodeConfigurations) {
    const adv = nc.localAPIEndpoint?.advertiseAddress;
    if (nc.nodeRegistration.name === name && adv) {
      return { address: adv, source: atField(nc.source, 'localAPIEndpoint.advertiseAddress') };
    }
  }
  const obj = v.nodesByName.get(name);
  if (node.internalIP && obj) {
    return {
      address: node.internalIP,
      source: derivedRef('Node InternalIP (no --advertise-address seen for this node)', [
        objectRef(obj, 'status.addresses'),
      ]),
    };
  }
  return null;
}

function bindPortFor(v: SnapshotView, name: string): number | null {
  for (const nc of v.snapshot.kubeadm.nodeConfigurations) {
    if (nc.nodeRegistration.name === name && nc.localAPIEndpoint?.bindPort)
      return nc.localAPIEndpoint.bindPort;
  }
  return null;
}

function workers(v: SnapshotView): Fact<NodeFact[]> {
  const key = 'nodes.workers';
  const title = 'worker nodes';
  if (!v.hasResources) return missingFact(key, title, NO_NODES);
  const cp = new Set(v.controlPlaneLabelled);
  for (const p of v.apiservers) if (p.node) cp.add(p.node);
  const value: NodeFact[] = [];
  for (const n of v.snapshot.resources.nodes) if (!cp.has(n.metadata.name)) value.push(nodeFact(n));
  return known(key, title, value, [
    derivedRef(
      `${value.length} Node object(s) without the ${CONTROL_PLANE_LABEL} label or a kube-apiserver`,
      [listingRef(v.snapshot, 'Node')],
    ),
  ]);
}

function kubeletVersions(v: SnapshotView): Fact<VersionCount[]> {
  const key = 'nodes.kubeletVersions';
  const title = 'kubelet versions across nodes';
  const nodes = v.snapshot.resources.nodes;
  if (nodes.length === 0) return missingFact(key, title, NO_NODES);
  const counts = new Map<string, number>();
  for (const n of nodes) {
    const ver = n.status?.nodeInfo?.kubeletVersion;
    const k = typeof ver === 'string' ? ver : 'unknown';
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const value = [...counts.entries()]
    .map(([version, count]) => ({ version, nodes: count }))
    .sort((a, b) => compareVersionText(a.version, b.version));
  return known(key, title, value, [
    derivedRef(`status.nodeInfo.kubeletVersion of ${nodes.length} Node object(s)`, [
      listingRef(v.snapshot, 'Node'),
    ]),
  ]);
}
