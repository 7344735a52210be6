/**
 * Adoption as a plan: the kit's Cluster API objects in the order that keeps every hazard of
 * capi.md §1 from firing, each step marked done when the management cluster already shows its
 * effect, so a second run does nothing and says so. Order: namespace → PKI Secrets (H6) → Cluster,
 * paused → infrastructure cluster objects → machine and bootstrap templates → TalosControlPlane
 * (replicas 0, paused) → its status.bootstrapped (H2, before any of its Machines exists) →
 * MachineDeployments (replicas 0, preflight skip, H5) → the `<cluster>-kubeconfig` Secret →
 * Secrets owned by the Cluster (H14) → the TalosControlPlane's initialized status → Cluster
 * unpaused → Cluster reconcile requested → TalosControlPlane unpaused only when no kubeadm etcd
 * member remains (H1). The kubeconfig Secret and the initialized status are what the paused
 * provider would write and what core Cluster API needs before any Machine gets its Node
 * (docs/knowledge/capi.md §4.9); the Cluster ignores a paused object's changes, hence the touch.
 * Pure: the adapter (adopt-apply.ts) reads the state and carries the steps out.
 */
import type { KubeObject } from '../snapshot/model.js';
import { describeAdoptClient, type MintResult } from './adopt-kubeconfig.js';
import {
  CLUSTER_NAME_LABEL,
  CONTROL_PLANE_LABEL,
  clusterControlPlaneInitialized,
  kubeconfigSecretName,
  PAUSED_ANNOTATION,
  SKIP_PREFLIGHT_ANNOTATION,
} from './view.js';

export type AdoptStep =
  | { kind: 'namespace'; name: string }
  | { kind: 'create'; object: KubeObject; why: string }
  | { kind: 'tcp-bootstrapped'; namespace: string; name: string }
  /** `secret` is the minted Secret (data never printed); absent when the step is done. */
  | { kind: 'kubeconfig-secret'; namespace: string; name: string; secret?: KubeObject; credential: string }
  | { kind: 'own-secrets'; namespace: string; cluster: string; secrets: string[] }
  /** The status fields the contract's Cluster controller reads, through the status subresource. */
  | {
      kind: 'tcp-initialized';
      namespace: string;
      name: string;
      contract: ControlPlaneContract;
      status: Record<string, unknown>;
    }
  | { kind: 'unpause-cluster'; namespace: string; name: string }
  /**
   * The Cluster reconciles and reads the paused TalosControlPlane's status: a touch annotation
   * whose value is the TalosControlPlane's resourceVersion, so a later change to it asks again.
   */
  | { kind: 'touch-cluster'; namespace: string; name: string; controlPlane: string }
  | { kind: 'unpause-tcp'; namespace: string; name: string };

/** The Cluster API contract a provider CRD declares (its `cluster.x-k8s.io/<contract>` labels). */
export type ControlPlaneContract = 'v1beta1' | 'v1beta2';

/** The annotation whose change makes the Cluster reconcile. */
export const RECONCILE_ANNOTATION = 'ferry.dev/reconcile-requested';

/**
 * The newest contract the CRD's labels declare, as core Cluster API picks it; none declared: v1beta1,
 * the only contract CACPPT speaks (capi.md H10).
 */
export function controlPlaneContract(crdLabels: Record<string, string> | undefined): ControlPlaneContract {
  return crdLabels?.['cluster.x-k8s.io/v1beta2'] ? 'v1beta2' : 'v1beta1';
}

/** The control plane's status that makes core Cluster API mark the Cluster ControlPlaneInitialized. */
export function initializedStatus(contract: ControlPlaneContract): Record<string, unknown> {
  switch (contract) {
    case 'v1beta1':
      return { initialized: true, ready: true };
    case 'v1beta2':
      return { initialization: { controlPlaneInitialized: true } };
  }
}

/**
 * The part of that status that says "initialized": once it holds, the step is done. `ready` is the
 * controller's to report after that, and a write over a not-ready it reported would be ferry
 * answering its own wait (the hand-over waits for ready).
 */
export function initializedMarker(contract: ControlPlaneContract): Record<string, unknown> {
  switch (contract) {
    case 'v1beta1':
      return { initialized: true };
    case 'v1beta2':
      return initializedStatus(contract);
  }
}

/** Whether `status` holds every field of `want` (nested objects compared field by field). */
export function statusHas(status: unknown, want: Record<string, unknown>): boolean {
  const s = (typeof status === 'object' && status !== null ? status : {}) as Record<string, unknown>;
  return Object.entries(want).every(([k, v]) =>
    typeof v === 'object' && v !== null ? statusHas(s[k], v as Record<string, unknown>) : s[k] === v,
  );
}

export interface AdoptExtras {
  /** The kubeconfig Secret minted for this run (adopt-kubeconfig.ts). */
  kubeconfig?: MintResult;
  /** The TalosControlPlane CRD's contract. Default v1beta1. */
  contract?: ControlPlaneContract;
}

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

/** `{a:{b:true}}` → `status.a.b: true`. */
function flat(o: Record<string, unknown>, prefix = 'status'): string {
  return Object.entries(o)
    .map(([k, v]) =>
      typeof v === 'object' && v !== null
        ? flat(v as Record<string, unknown>, `${prefix}.${k}`)
        : `${prefix}.${k}: ${String(v)}`,
    )
    .join(', ');
}

export function describeStep(s: AdoptStep): string {
  switch (s.kind) {
    case 'namespace':
      return `namespace ${s.name}`;
    case 'create':
      return `${s.object.kind} ${s.object.metadata.namespace ? `${s.object.metadata.namespace}/` : ''}${s.object.metadata.name} (${s.why})`;
    case 'tcp-bootstrapped':
      return `TalosControlPlane ${s.namespace}/${s.name} status.bootstrapped: true`;
    case 'kubeconfig-secret':
      return `Secret ${s.namespace}/${s.name} (type cluster.x-k8s.io/secret, key value, the kubeconfig Cluster API reaches the workload cluster with; ${s.credential})`;
    case 'tcp-initialized':
      return `TalosControlPlane ${s.namespace}/${s.name} ${flat(s.status)} (contract ${s.contract}: the Cluster's ControlPlaneInitialized)`;
    case 'touch-cluster':
      return `Cluster ${s.namespace}/${s.name} asked to reconcile (annotation ${RECONCILE_ANNOTATION}: TalosControlPlane ${s.controlPlane}'s resourceVersion): it ignores changes to the paused TalosControlPlane`;
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
  extras: AdoptExtras = {},
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
  const kubeconfigName = kubeconfigSecretName(cluster.metadata.name);
  const liveKubeconfig = have.get(`Secret|${ns}|${kubeconfigName}`);
  const mint = extras.kubeconfig;
  if (!liveKubeconfig && mint?.kind !== 'minted')
    return {
      kind: 'refused',
      reason: `Secret ${ns}/${kubeconfigName} does not exist and ferry cannot write it: ${mint?.kind === 'unavailable' ? mint.reason : 'no kubeconfig was minted'}; without it no Machine ever gets its Node`,
      remediation:
        'generate the kit again with `ferry generate --provisioner capi` (capi/secrets.yaml carries the cluster CA), then run adopt again',
    };
  steps.push({
    step: {
      kind: 'kubeconfig-secret',
      namespace: ns,
      name: kubeconfigName,
      ...(!liveKubeconfig && mint?.kind === 'minted' && { secret: mint.secret }),
      credential: liveKubeconfig
        ? 'already there'
        : describeAdoptClient(mint?.kind === 'minted' ? mint.notAfter : undefined),
    },
    done: liveKubeconfig !== undefined,
  });
  const owned = (name: string) =>
    (have.get(`Secret|${ns}|${name}`)?.metadata.ownerReferences ?? []).some(
      (r) =>
        r.kind === 'Cluster' &&
        r.name === cluster.metadata.name &&
        (!liveCluster?.metadata.uid || r.uid === liveCluster.metadata.uid),
    );
  // The kubeconfig Secret is ours to own when ferry writes it, or finds it without any owner
  // (a run stopped in between); one CACPPT wrote keeps CACPPT's owner.
  const ownKubeconfig = !liveKubeconfig || (liveKubeconfig.metadata.ownerReferences ?? []).length === 0;
  const secretNames = [...kitSecrets.map((s) => s.metadata.name), ...(ownKubeconfig ? [kubeconfigName] : [])];
  steps.push({
    step: { kind: 'own-secrets', namespace: ns, cluster: cluster.metadata.name, secrets: secretNames },
    done: secretNames.every(owned),
  });
  const contract = extras.contract ?? 'v1beta1';
  const wantStatus = initializedStatus(contract);
  const initialized = statusHas(liveTcp?.status, initializedMarker(contract));
  steps.push({
    step: { kind: 'tcp-initialized', namespace: ns, name: tcp.metadata.name, contract, status: wantStatus },
    done: initialized,
  });
  steps.push({
    step: { kind: 'unpause-cluster', namespace: ns, name: cluster.metadata.name },
    done: liveCluster !== undefined && liveCluster.spec?.['paused'] !== true,
  });
  // Done once the Cluster shows the result, or its request names the TalosControlPlane as it is
  // now (its status already there): a change since, by hand or a controller, is asked about again.
  const tcpVersion = liveTcp?.metadata.resourceVersion;
  steps.push({
    step: {
      kind: 'touch-cluster',
      namespace: ns,
      name: cluster.metadata.name,
      controlPlane: tcp.metadata.name,
    },
    done:
      clusterControlPlaneInitialized(liveCluster) ||
      (initialized &&
        tcpVersion !== undefined &&
        liveCluster?.metadata.annotations?.[RECONCILE_ANNOTATION] === tcpVersion),
  });
  if (!kubeadmMembersRemain)
    steps.push({
      step: { kind: 'unpause-tcp', namespace: ns, name: tcp.metadata.name },
      done: liveTcp !== undefined && liveTcp.metadata.annotations?.[PAUSED_ANNOTATION] === undefined,
    });
  return { kind: 'plan', steps, nothingToDo: steps.every((s) => s.done) };
}
