/**
 * Observing the world: exactly the sections an expectation names, through the ports. Failures to
 * observe are part of the observation (an unreachable etcd is something a gate must report), not
 * exceptions.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { ExpectedState, NodeRef } from '../plan/expected-state.js';
import type { FindingRef } from '../plan/model.js';
import type {
  ApiserverStatusPort,
  EtcdAdminPort,
  EtcdView,
  KubeAdminPort,
  LoadBalancerPort,
  MachineState,
  NodeView,
  PdbView,
  ProvisionerPort,
} from '../ports/run.js';
import type { Bindings } from './bindings.js';

export interface ObserveDeps {
  etcd: EtcdAdminPort;
  kube: KubeAdminPort;
  provisioner: ProvisionerPort;
  lb: LoadBalancerPort;
  apiservers?: ApiserverStatusPort;
  bindings: Bindings;
  /** Relative workstation files are looked up here (the plan's directory). */
  baseDir: string;
  /** The audit as the plan recorded it. */
  audit: { blockers: FindingRef[] };
  /** Questions the operator answered "yes" to, for the step being observed. */
  confirmed: ReadonlySet<string>;
}

export type Observed<T> = { ok: true; value: T } | { ok: false; error: string };

export interface NodeObservation {
  node: NodeView | null;
  /** Pods drain would still evict (names), when `drained` was asked. */
  evictable?: string[];
}

export interface World {
  at: string;
  etcd?: Observed<EtcdView>;
  /** By node name; a reference whose name is not known yet is absent. */
  nodes: Map<string, Observed<NodeObservation>>;
  /**
   * By node name. A value of `undefined` means ferry has no way to tell (the load balancer cannot
   * be asked, the provisioner does not know): a person can. A failed lookup (a 403, a timeout) is
   * `ok: false`: a gate treats it as a mismatch it could not observe, never as "cannot tell".
   */
  loadBalancer: Map<string, Observed<boolean | undefined>>;
  apiservers: Map<string, Observed<boolean | undefined>>;
  machines: Map<string, Observed<MachineState | undefined>>;
  endpoint?: boolean;
  /** Every PodDisruptionBudget of the cluster, when `budgets` was asked. */
  budgets?: Observed<PdbView[]>;
  objects: Map<string, Observed<Record<string, unknown> | null>>;
  files: Map<string, boolean | undefined>;
  confirmed: ReadonlySet<string>;
  audit: { blockers: FindingRef[] };
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function attempt<T>(fn: () => Promise<T>): Promise<Observed<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    return { ok: false, error: errText(err) };
  }
}

/** apiVersion of the kinds `objects` expectations name. */
export const KIND_API_VERSION: Record<string, string> = {
  Secret: 'v1',
  ConfigMap: 'v1',
  Service: 'v1',
  Namespace: 'v1',
  Node: 'v1',
  ServiceAccount: 'v1',
  DaemonSet: 'apps/v1',
  Deployment: 'apps/v1',
  StatefulSet: 'apps/v1',
  ClusterRole: 'rbac.authorization.k8s.io/v1',
  ClusterRoleBinding: 'rbac.authorization.k8s.io/v1',
  Role: 'rbac.authorization.k8s.io/v1',
  RoleBinding: 'rbac.authorization.k8s.io/v1',
  CSIDriver: 'storage.k8s.io/v1',
  PodDisruptionBudget: 'policy/v1',
  // GitOps owners a gitops-suspend step patches (knowledge/gitops.ts).
  Application: 'argoproj.io/v1alpha1',
  Kustomization: 'kustomize.toolkit.fluxcd.io/v1',
  HelmRelease: 'helm.toolkit.fluxcd.io/v2',
};

export function objectKey(o: { kind: string; namespace?: string; name: string }): string {
  return `${o.kind}/${o.namespace ?? ''}/${o.name}`;
}

export async function observe(expect: ExpectedState, deps: ObserveDeps): Promise<World> {
  const world: World = {
    at: new Date().toISOString(),
    nodes: new Map(),
    loadBalancer: new Map(),
    apiservers: new Map(),
    machines: new Map(),
    objects: new Map(),
    files: new Map(),
    confirmed: deps.confirmed,
    audit: deps.audit,
  };
  const b = deps.bindings;
  const jobs: Promise<void>[] = [];

  if (expect.etcd) {
    jobs.push(
      attempt(() => deps.etcd.observe()).then((r) => {
        world.etcd = r;
      }),
    );
  }

  for (const n of expect.nodes ?? []) {
    const name = b.nodeName(n.node);
    if (!name || world.nodes.has(name)) continue;
    world.nodes.set(name, { ok: false, error: 'pending' });
    jobs.push(
      attempt(async (): Promise<NodeObservation> => {
        const node = (await deps.kube.getNode(name)) ?? null;
        if (!n.drained || !node) return { node };
        const pods = await deps.kube.podsOnNode(name);
        return {
          node,
          evictable: pods.filter((p) => !p.ignoredByDrain).map((p) => `${p.namespace}/${p.name}`),
        };
      }).then((r) => void world.nodes.set(name, r)),
    );
  }

  for (const lb of expect.loadBalancer ?? []) {
    const name = b.nodeName(lb.node);
    if (!name) continue;
    const address = b.nodeAddress(lb.node) ?? lb.address;
    const ask = deps.lb.inRotation?.bind(deps.lb);
    jobs.push(
      attempt(() =>
        ask
          ? looking(`asking the load balancer about ${name} (${address ?? '?'}:${lb.port})`, () =>
              ask({ node: name, address, port: lb.port }),
            )
          : Promise.resolve(undefined),
      ).then((v) => void world.loadBalancer.set(name, v)),
    );
  }

  for (const a of expect.apiservers ?? []) {
    const name = b.nodeName(a.node);
    if (!name) continue;
    jobs.push(
      attempt(() => apiserverServing(deps, a.node, name)).then((v) => void world.apiservers.set(name, v)),
    );
  }

  for (const m of expect.machines ?? []) {
    const name = b.nodeName(m.node);
    if (!name) continue;
    jobs.push(attempt(() => machineState(deps, m.node, name)).then((v) => void world.machines.set(name, v)));
  }

  if (expect.endpoint) {
    jobs.push(
      deps.kube.readyz().then((v) => {
        world.endpoint = v;
      }),
    );
  }

  if (expect.budgets) {
    jobs.push(
      attempt(() => looking('listing the PodDisruptionBudgets', () => deps.kube.listPdbs())).then((r) => {
        world.budgets = r;
      }),
    );
  }

  for (const o of expect.objects ?? []) {
    const apiVersion = KIND_API_VERSION[o.kind];
    const key = objectKey(o);
    jobs.push(
      (apiVersion
        ? attempt(async () => (await deps.kube.getObject(apiVersion, o.kind, o.namespace, o.name)) ?? null)
        : Promise.resolve<Observed<null>>({
            ok: false,
            error: `ferry does not know the apiVersion of kind ${o.kind}`,
          })
      ).then((r) => void world.objects.set(key, r)),
    );
  }

  for (const f of expect.files ?? []) {
    // Files on a node are out of ferry's reach; workstation files are checked.
    if (f.where.kind !== 'workstation') world.files.set(f.path, undefined);
    else {
      const at = isAbsolute(f.path) ? f.path : join(deps.baseDir, f.path);
      // A snapshot the run sealed with --snapshot-recipient is kept only as PATH.age (plaintext removed).
      world.files.set(f.path, existsSync(at) || existsSync(`${at}.age`));
    }
  }

  await Promise.all(jobs);
  return world;
}

/** Rejects with what failed and where, so that the gate's message carries the cause. */
async function looking<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new Error(`${what}: ${errText(err)}`, { cause: err });
  }
}

/**
 * Whether the apiserver on `name` serves: the run's own apiserver port when it can tell, else the
 * `default/kubernetes` EndpointSlices. Undefined only when neither can tell (no port, no address,
 * no EndpointSlice at all); a failed lookup rejects.
 */
async function apiserverServing(deps: ObserveDeps, ref: NodeRef, name: string): Promise<boolean | undefined> {
  const address = deps.bindings.nodeAddress(ref);
  const apiservers = deps.apiservers;
  const direct = apiservers
    ? await looking(`asking whether the apiserver on ${name} serves`, () => apiservers.serving(name, address))
    : undefined;
  if (direct !== undefined) return direct;
  if (!address) return undefined;
  const listed = await looking('reading the default/kubernetes EndpointSlices', () =>
    deps.kube.apiserverAddresses(),
  );
  return listed === undefined ? undefined : listed.includes(address);
}

async function machineState(
  deps: ObserveDeps,
  ref: NodeRef,
  name: string,
): Promise<MachineState | undefined> {
  const address = deps.bindings.nodeAddress(ref);
  const p = deps.provisioner;
  const told = p.machineState
    ? await looking(`asking the ${p.kind} provisioner about ${name}`, () => p.machineState!(name, address))
    : undefined;
  if (told !== undefined) return told;
  if (ref.kind === 'talos') {
    // A Talos machine that registered its Node, or whose member is listed, was provisioned.
    const node = await looking(`reading Node ${name}`, () => deps.kube.getNode(name));
    if (node) return 'provisioned';
  }
  return undefined;
}
