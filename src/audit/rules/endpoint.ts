/**
 * Endpoint and load balancer (blockers.md "Endpoint and load balancer"). Talos nodes need one stable
 * control-plane endpoint that outlives every kubeadm control plane; how that endpoint is served
 * (external LB or a VIP living on the old control planes) decides the handover steps.
 */
import type { Endpoint } from '../../facts/model.js';
import { atField } from '../../facts/sources.js';
import { EXCLUDE_FROM_LB_LABEL } from '../../knowledge/talos-config.js';
import type { KubeObject, StaticPod } from '../../snapshot/model.js';
import { type Evidence, evidenceFromSource, type Subject } from '../findings.js';
import { HOW_TO_PROVIDE, notApplicable, type Rule, type RuleFinding, skip } from '../rule.js';
import { CLUSTER_INFO, WORKLOADS } from '../rule-reads.js';
import { factEvidence, list, objectEvidence, skipFact } from './shared.js';

const DOCS = (id: string) => `docs/rules.md#${id}`;

const showEndpoint = (e: Endpoint) => `${e.url}${e.node ? ` (${e.node}'s own address)` : ''}`;

export const controlPlaneEndpointMissing: Rule = {
  id: 'endpoint.control-plane-endpoint-missing',
  family: 'endpoint',
  severity: 'blocker',
  title: 'No stable control-plane endpoint',
  inputs: ['kubeadm'],
  reads: [CLUSTER_INFO],
  description:
    'Talos nodes (and every kubeconfig) need an endpoint that survives the removal of each kubeadm control plane: a load balancer or VIP, not one node.',
  docs: DOCS('endpoint.control-plane-endpoint-missing'),
  check(ctx) {
    const cc = ctx.snapshot.kubeadm.clusterConfiguration;
    if (!cc) return skip(['kubeadm ClusterConfiguration'], HOW_TO_PROVIDE.kubeadm);
    const fact = ctx.facts.cluster.controlPlaneEndpoint;
    const out: RuleFinding[] = [];
    const introduce =
      'Introduce a load balancer or VIP first: put its name/IP into apiServer.certSANs and re-issue the apiserver certificates, set controlPlaneEndpoint in kubeadm-config, point kube-public/cluster-info, the kube-proxy ConfigMap and every kubelet/admin kubeconfig at it, then re-run the audit.';
    const subject: Subject = { kind: 'Fact', name: fact.key };
    if (!cc.controlPlaneEndpoint) {
      const seen = fact.value ? ` Clients use ${showEndpoint(fact.value)} instead.` : '';
      out.push({
        message: `kubeadm-config has no controlPlaneEndpoint: the cluster was built around one control plane's address.${seen}`,
        evidence: [
          evidenceFromSource(atField(cc.source, 'controlPlaneEndpoint'), {
            observed: '(empty)',
            expected: 'a load-balanced host:port',
          }),
          ...(fact.value ? factEvidence(fact, showEndpoint) : []),
        ],
        remediation: introduce,
        subject,
        field: 'controlPlaneEndpoint',
      });
      return out;
    }
    if (fact.value?.node) {
      out.push({
        message: `The control-plane endpoint ${fact.value.url} is the own address of control plane ${fact.value.node}: it disappears when that node is migrated.`,
        evidence: factEvidence(fact, showEndpoint, { expected: 'a load balancer or VIP' }),
        remediation: introduce,
        subject,
        field: 'single-node',
      });
      return out;
    }
    // The endpoint is fine; copies of it that point at one node are not.
    for (const c of fact.conflict?.candidates ?? []) {
      if (!c.value.node || c.source.kind !== 'object') continue;
      out.push({
        message: `${c.source.objectKind} ${c.source.namespace ?? ''}/${c.source.name} points at ${c.value.url}, control plane ${c.value.node}'s own address, not the endpoint ${fact.value?.url ?? '(unknown)'}.`,
        evidence: [
          evidenceFromSource(c.source, {
            observed: c.value.url,
            expected: fact.value?.url ?? 'the endpoint',
          }),
        ],
        remediation:
          c.source.name === 'cluster-info'
            ? `Set the server in kube-public/cluster-info data.kubeconfig to ${fact.value?.url} (the bootstrap signer re-signs it); kubeadm join and Talos bootstrap read it.`
            : `Set the server in ${c.source.namespace}/${c.source.name} to ${fact.value?.url} and restart the pods that read it.`,
        subject: {
          kind: c.source.objectKind,
          group: '',
          name: c.source.name,
          ...(c.source.namespace ? { namespace: c.source.namespace } : {}),
        },
        field: c.source.field ?? 'server',
      });
    }
    return out;
  },
};

/** Software that typically holds a VIP or balances the apiserver on the control planes themselves. */
const VIP_SOFTWARE = /(keepalived|haproxy|kube-vip)/i;

/** The repository part of an image reference, without registry host and tag. */
function imageName(image: string): string {
  const noTag = image.split('@')[0]!.replace(/:[^/:]+$/, '');
  return noTag.slice(noTag.lastIndexOf('/') + 1);
}

// biome-ignore lint/suspicious/noExplicitAny: pod specs are read structurally
function vipImages(spec: any): string[] {
  const out: string[] = [];
  for (const list of ['initContainers', 'containers'] as const) {
    for (const c of Array.isArray(spec?.[list]) ? spec[list] : []) {
      if (typeof c?.image === 'string' && VIP_SOFTWARE.test(imageName(c.image))) out.push(c.image);
    }
  }
  return out;
}

export const vipOnControlPlane: Rule = {
  id: 'endpoint.vip-on-control-plane',
  family: 'endpoint',
  severity: 'risk',
  title: 'Endpoint VIP or load balancer runs on the kubeadm control planes',
  inputs: ['api', 'node'],
  reads: [...WORKLOADS, 'nodes', CLUSTER_INFO],
  requires: ['resources'],
  description:
    'When keepalived/haproxy/kube-vip on the old control planes hold the endpoint, turning them off causes apiserver downtime, and a Talos VIP and VRRP cannot hold the same IP at once.',
  docs: DOCS('endpoint.vip-on-control-plane'),
  check(ctx) {
    const endpoint = ctx.facts.cluster.controlPlaneEndpoint.value;
    if (endpoint?.node)
      return notApplicable(
        `the endpoint is ${endpoint.node}'s own address, there is no VIP (see endpoint.control-plane-endpoint-missing)`,
      );
    const cps = (ctx.facts.nodes.controlPlane.value ?? []).map((n) => n.name);
    // One finding per owner (DaemonSet, Deployment, mirror pod), with the control planes it runs on.
    const byOwner = new Map<string, { owner: KubeObject; nodes: string[]; images: Set<string> }>();
    for (const node of cps) {
      for (const pod of ctx.index.podsByNode.get(node) ?? []) {
        const images = vipImages(pod.spec);
        if (images.length === 0) continue;
        const owner = ctx.index.topControllerOf(pod) ?? pod;
        const key = `${owner.kind}/${owner.metadata.namespace ?? ''}/${owner.metadata.name}`;
        const e = byOwner.get(key) ?? { owner, nodes: [], images: new Set<string>() };
        if (!e.nodes.includes(node)) e.nodes.push(node);
        for (const i of images) e.images.add(i);
        byOwner.set(key, e);
      }
    }
    const staticPods: StaticPod[] = ctx.snapshot.staticPods.filter(
      (p) =>
        VIP_SOFTWARE.test(p.component) || (p.image !== undefined && VIP_SOFTWARE.test(imageName(p.image))),
    );
    const out: RuleFinding[] = [];
    const target = endpoint ? `the endpoint ${endpoint.host}` : 'the control-plane endpoint';
    const plan = `Plan the handover (Talos guide): move the load-balancer backends to the Talos nodes as they join, keep the VIP on the last kubeadm control plane, then switch to a Talos VIP (Layer2VIPConfig {name: <VIP>, link: <interface>}) in a short, measured gap; or move ${target} to an external load balancer before migrating.`;
    for (const { owner, nodes, images } of byOwner.values()) {
      const mirror =
        owner.kind === 'Pod' && owner.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined;
      out.push({
        message: `${mirror ? 'Static pod' : owner.kind} ${owner.metadata.namespace ?? 'default'}/${owner.metadata.name} runs ${list([...images])} on control plane(s) ${list(nodes)}: ${target} is probably held on the kubeadm control planes, and stopping it takes the API down.`,
        evidence: [
          objectEvidence(
            owner,
            owner.kind === 'Pod' ? 'spec.containers[].image' : 'spec.template.spec.containers[].image',
            { observed: list([...images]) },
          ),
          ...ctx.facts.cluster.controlPlaneEndpoint.provenance
            .slice(0, 1)
            .map((r) => evidenceFromSource(r, { observed: endpoint?.url ?? '' })),
        ],
        remediation: plan,
        subject: {
          kind: owner.kind,
          group: owner.apiVersion.includes('/') ? owner.apiVersion.split('/')[0]! : '',
          name: owner.metadata.name,
          ...(owner.metadata.namespace ? { namespace: owner.metadata.namespace } : {}),
        },
        field: 'vip',
      });
    }
    for (const p of staticPods) {
      out.push({
        message: `A static pod manifest for ${p.component}${p.node ? ` on ${p.node}` : ''} runs ${p.image ?? p.component}: ${target} is probably held on the kubeadm control planes.`,
        evidence: [evidenceFromSource(p.source, { observed: p.image ?? p.component })],
        remediation: plan,
        subject: { kind: 'StaticPod', name: p.component, ...(p.node ? { node: p.node } : {}) },
        field: 'vip',
      });
    }
    if (out.length > 0) return out;
    // Nothing in the API; keepalived/haproxy as host services are invisible to a snapshot.
    return skip(
      ['load-balancer configuration on the control-plane hosts'],
      `no keepalived, haproxy or kube-vip runs as a pod on a control plane; check the control-plane hosts for such services (systemctl is-active keepalived haproxy) and confirm ${target} is served by a load balancer outside the control planes`,
    );
  },
};

export const lbBackends: Rule = {
  id: 'endpoint.lb-backends',
  family: 'endpoint',
  severity: 'info',
  title: 'Load-balancer backends to swap during the migration',
  inputs: ['node'],
  reads: ['nodes', CLUSTER_INFO],
  // The backends are the control planes' apiserver addresses (Nodes or manifests); the LB itself is not read.
  requires: [],
  description:
    'An external load balancer must gain each Talos control plane once its apiserver is ready and lose each kubeadm control plane before it is drained.',
  docs: DOCS('endpoint.lb-backends'),
  check(ctx) {
    const cpFact = ctx.facts.nodes.controlPlane;
    if (cpFact.value === undefined) return skipFact(cpFact);
    const endpoint = ctx.facts.cluster.controlPlaneEndpoint.value;
    if (endpoint?.node)
      return notApplicable(
        `the endpoint is ${endpoint.node}'s own address, there is no load balancer (see endpoint.control-plane-endpoint-missing)`,
      );
    const backends = cpFact.value.map((n) => {
      const addr = n.advertiseAddress?.address ?? n.internalIP;
      const port = n.apiserverPort ?? 6443;
      return { n, backend: addr ? `${addr.includes(':') ? `[${addr}]` : addr}:${port}` : null };
    });
    const known = backends.filter((b) => b.backend !== null);
    const evidence: Evidence[] = known.map(({ n, backend }) =>
      n.advertiseAddress
        ? evidenceFromSource(n.advertiseAddress.source, {
            observed: backend!,
            note: `control plane ${n.name}`,
          })
        : { kind: 'node', node: n.name, field: 'status.addresses', observed: backend! },
    );
    if (evidence.length === 0) evidence.push(...factEvidence(cpFact, (v) => list(v.map((n) => n.name))));
    const unknown = backends.filter((b) => b.backend === null).map((b) => b.n.name);
    return [
      {
        message: `${endpoint ? `${endpoint.url} should` : 'The control-plane endpoint should'} balance today over ${list(known.map((b) => `${b.n.name} ${b.backend}`))}${unknown.length ? ` (no address known for ${list(unknown)})` : ''}. Each control-plane swap adds the Talos node's address:${known[0]?.n.apiserverPort ?? 6443} once its apiserver is ready and removes the kubeadm node before it is drained.`,
        evidence,
        remediation: `Have access to the load-balancer configuration ready for every step; Talos control planes carry the label ${EXCLUDE_FROM_LB_LABEL}, which also removes them from Service load balancers unless the label is dropped.`,
        subject: { kind: 'Fact', name: 'endpoint.backends' },
        field: 'backends',
      },
    ];
  },
};

export const ENDPOINT_RULES: Rule[] = [controlPlaneEndpointMissing, vipOnControlPlane, lbBackends];
