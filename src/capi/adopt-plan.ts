/**
 * Adoption as a plan: the kit's Cluster API objects in the order that keeps every hazard of
 * capi.md §1 from firing, each step marked done when the management cluster already shows its
 * effect, so a second run does nothing and says so. Order: namespace → PKI Secrets (H6) → Cluster,
 * paused → infrastructure cluster objects → machine and bootstrap templates → TalosControlPlane
 * (replicas 0, paused) → its status.bootstrapped (H2, before any of its Machines exists) →
 * MachineDeployments (replicas 0, preflight skip, H5) → Secrets owned by the Cluster (H14) →
 * Cluster unpaused → TalosControlPlane unpaused only when no kubeadm etcd member remains (H1).
 * Pure: the adapter (adopt-apply.ts) reads the state and carries the steps out.
 */
import type { KubeObject } from '../snapshot/model.js';
import {
  CLUSTER_NAME_LABEL,
  CONTROL_PLANE_LABEL,
  PAUSED_ANNOTATION,
  SKIP_PREFLIGHT_ANNOTATION,
} from './view.js';

export type AdoptStep =
  | { kind: 'namespace'; name: string }
  | { kind: 'create'; object: KubeObject; why: string }
  | { kind: 'tcp-bootstrapped'; namespace: string; name: string }
  | { kind: 'own-secrets'; namespace: string; cluster: string; secrets: string[] }
  | { kind: 'unpause-cluster'; namespace: string; name: string }
  | { kind: 'unpause-tcp'; namespace: string; name: string };

export interface PlannedStep {
  step: AdoptStep;
  /** The management cluster already shows this step's effect. */
  done: boolean;
}

export type AdoptPlan =
  | { kind: 'plan'; steps: PlannedStep[]; nothingToDo: boolean }
  /** A state adoption must not touch: the gate says why. */
  | { kind: 'refused'; reason: string; remediation: string };

const INFRA_CLUSTER_KINDS = ['ProxmoxCluster', 'VSphereClusterIdentity', 'VSphereCluster', 'InClusterIPPool'];
const TEMPLATE_KINDS = ['ProxmoxMachineTemplate', 'VSphereMachineTemplate', 'TalosConfigTemplate'];

const key = (o: KubeObject) => `${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;

export function describeStep(s: AdoptStep): string {
  switch (s.kind) {
    case 'namespace':
      return `namespace ${s.name}`;
    case 'create':
      return `${s.object.kind} ${s.object.metadata.namespace ? `${s.object.metadata.namespace}/` : ''}${s.object.metadata.name} (${s.why})`;
    case 'tcp-bootstrapped':
      return `TalosControlPlane ${s.namespace}/${s.name} status.bootstrapped: true`;
    case 'own-secrets':
      return `Secrets ${s.secrets.join(', ')} owned by Cluster ${s.namespace}/${s.cluster}`;
    case 'unpause-cluster':
      return `Cluster ${s.namespace}/${s.name} unpaused`;
    case 'unpause-tcp':
      return `TalosControlPlane ${s.namespace}/${s.name} unpaused`;
  }
}

/**
 * `kit`: the objects of capi/secrets.yaml and capi/cluster.yaml; `live`: what the management
 * cluster holds now (at least the kinds above and Machines); `kubeadmMembersRemain`: whether any
 * etcd member is not a Talos Machine of this cluster — while one is, the TalosControlPlane stays paused.
 */
export function planAdoption(
  kit: KubeObject[],
  live: KubeObject[],
  kubeadmMembersRemain: boolean,
): AdoptPlan {
  const cluster = kit.find((o) => o.kind === 'Cluster');
  const tcp = kit.find((o) => o.kind === 'TalosControlPlane');
  if (!cluster || !tcp)
    return {
      kind: 'refused',
      reason: 'the kit has no Cluster or TalosControlPlane',
      remediation: 'generate the kit with --provisioner capi',
    };
  const ns = cluster.metadata.namespace ?? 'default';
  const have = new Map(live.map((o) => [key(o), o]));
  const liveOf = (o: KubeObject) => have.get(key(o));
  const liveTcp = liveOf(tcp);
  const tcpMachines = live.filter(
    (o) =>
      o.kind === 'Machine' &&
      o.metadata.namespace === ns &&
      o.metadata.labels?.[CLUSTER_NAME_LABEL] === cluster.metadata.name &&
      o.metadata.labels?.[CONTROL_PLANE_LABEL] !== undefined,
  );
  const bootstrapped = liveTcp?.status?.['bootstrapped'] === true;
  // H2: once a TCP Machine exists unbootstrapped, CACPPT may already be bootstrapping a second etcd.
  if (tcpMachines.length > 0 && !bootstrapped)
    return {
      kind: 'refused',
      reason: `control-plane Machines ${tcpMachines.map((m) => m.metadata.name).join(', ')} exist while TalosControlPlane ${tcp.metadata.name} is not bootstrapped: CACPPT may bootstrap a second etcd cluster`,
      remediation: `pause the Cluster (kubectl -n ${ns} patch cluster ${cluster.metadata.name} --type merge -p '{"spec":{"paused":true}}'), delete those Machines, and run adopt again`,
    };
  const liveReplicas = liveTcp?.spec?.['replicas'];
  if (typeof liveReplicas === 'number' && liveReplicas > 0 && !bootstrapped)
    return {
      kind: 'refused',
      reason: `TalosControlPlane ${tcp.metadata.name} already asks for ${liveReplicas} replicas before being marked bootstrapped`,
      remediation: `scale it to 0 (kubectl -n ${ns} scale taloscontrolplane ${tcp.metadata.name} --replicas=0) and run adopt again`,
    };

  const steps: PlannedStep[] = [];
  const create = (o: KubeObject, why: string) =>
    steps.push({ step: { kind: 'create', object: o, why }, done: liveOf(o) !== undefined });
  steps.push({
    step: { kind: 'namespace', name: ns },
    done: have.has(`Namespace||${ns}`) || live.some((o) => o.metadata.namespace === ns),
  });
  const kitSecrets = kit.filter((o) => o.kind === 'Secret');
  for (const s of kitSecrets) create(s, 'the kubeadm PKI, before anything can generate a new one (H6)');
  create(
    { ...cluster, spec: { ...cluster.spec, paused: true } },
    'paused: no controller acts while the rest is created',
  );
  for (const o of kit.filter((x) => INFRA_CLUSTER_KINDS.includes(x.kind)))
    create(o, 'infrastructure cluster');
  for (const o of kit.filter((x) => TEMPLATE_KINDS.includes(x.kind))) create(o, 'template');
  create(
    {
      ...tcp,
      metadata: {
        ...tcp.metadata,
        annotations: { ...tcp.metadata.annotations, [PAUSED_ANNOTATION]: 'true' },
      },
      spec: { ...tcp.spec, replicas: 0 },
    },
    'replicas 0 and paused: its etcd audit must not run while kubeadm members exist (H1)',
  );
  steps.push({
    step: { kind: 'tcp-bootstrapped', namespace: ns, name: tcp.metadata.name },
    done: bootstrapped,
  });
  for (const md of kit.filter((x) => x.kind === 'MachineDeployment'))
    create(
      {
        ...md,
        metadata: {
          ...md.metadata,
          annotations: { ...md.metadata.annotations, [SKIP_PREFLIGHT_ANNOTATION]: 'ControlPlaneIsStable' },
        },
        spec: { ...md.spec, replicas: 0 },
      },
      'replicas 0 with the preflight skip (H5)',
    );
  const liveCluster = liveOf(cluster);
  const owned = (name: string) =>
    (have.get(`Secret|${ns}|${name}`)?.metadata.ownerReferences ?? []).some(
      (r) =>
        r.kind === 'Cluster' &&
        r.name === cluster.metadata.name &&
        (!liveCluster?.metadata.uid || r.uid === liveCluster.metadata.uid),
    );
  const secretNames = kitSecrets.map((s) => s.metadata.name);
  steps.push({
    step: { kind: 'own-secrets', namespace: ns, cluster: cluster.metadata.name, secrets: secretNames },
    done: secretNames.every(owned),
  });
  steps.push({
    step: { kind: 'unpause-cluster', namespace: ns, name: cluster.metadata.name },
    done: liveCluster !== undefined && liveCluster.spec?.['paused'] !== true,
  });
  if (!kubeadmMembersRemain)
    steps.push({
      step: { kind: 'unpause-tcp', namespace: ns, name: tcp.metadata.name },
      done: liveTcp !== undefined && liveTcp.metadata.annotations?.[PAUSED_ANNOTATION] === undefined,
    });
  return { kind: 'plan', steps, nothingToDo: steps.every((s) => s.done) };
}
