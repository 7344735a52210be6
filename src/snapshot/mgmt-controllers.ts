/**
 * What a snapshot keeps of the management cluster's Deployments: only those of Cluster API
 * controllers (a provider's, labelled `cluster.x-k8s.io/provider` by its kustomization, or the
 * operator's), reduced to what decides whether they survive a node: replicas, leader election,
 * spread over nodes. Images, environment and volumes are dropped as the object arrives.
 */
import type { KubeObject, MgmtController } from './model.js';

const PROVIDER_LABEL = 'cluster.x-k8s.io/provider';
const OPERATOR = 'cluster-api-operator';
const HOSTNAME = 'kubernetes.io/hostname';
/** The flags the providers' and the operator's managers take (controller-runtime's and kubebuilder v2's names). */
const LEADER_FLAGS = ['--leader-elect', '--enable-leader-election'];

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const rec = (v: unknown): Rec => (isRec(v) ? v : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The component a Deployment runs, or undefined when it is not a Cluster API controller. */
export function controllerComponent(d: KubeObject): string | undefined {
  const labels = d.metadata.labels ?? {};
  const provider = labels[PROVIDER_LABEL];
  if (provider) return provider;
  if (
    labels['app.kubernetes.io/name'] === OPERATOR ||
    labels['clusterctl.cluster.x-k8s.io/core'] === 'capi-operator'
  )
    return OPERATOR;
  return undefined;
}

/** on/off from the manager's arguments: `--flag`, `--flag=true|false`; the last one counts, as Go's flag package does. */
export function leaderElectionOf(args: readonly unknown[]): 'on' | 'off' {
  let on = false;
  for (const a of args) {
    if (typeof a !== 'string') continue;
    const [flag, value] = a.split('=', 2) as [string, string | undefined];
    if (LEADER_FLAGS.includes(flag)) on = value === undefined || value === 'true';
  }
  return on ? 'on' : 'off';
}

const selects = (selector: unknown, labels: Rec) =>
  Object.entries(rec(rec(selector)['matchLabels'])).every(([k, v]) => labels[k] === v) &&
  Object.keys(rec(rec(selector)['matchLabels'])).length > 0;

/** A required anti-affinity or a DoNotSchedule spread on hostname that selects the Deployment's own pods. */
export function spreadOf(podSpec: Rec, podLabels: Rec): 'hostname' | 'none' {
  const anti = list(
    rec(rec(podSpec['affinity'])['podAntiAffinity'])['requiredDuringSchedulingIgnoredDuringExecution'],
  );
  const spread = list(podSpec['topologySpreadConstraints']);
  const ok =
    anti.some((t) => rec(t)['topologyKey'] === HOSTNAME && selects(rec(t)['labelSelector'], podLabels)) ||
    spread.some(
      (t) =>
        rec(t)['topologyKey'] === HOSTNAME &&
        rec(t)['whenUnsatisfiable'] === 'DoNotSchedule' &&
        selects(rec(t)['labelSelector'], podLabels),
    );
  return ok ? 'hostname' : 'none';
}

/** The controller a Deployment is, or undefined for any other Deployment. */
export function controllerSummary(d: KubeObject): MgmtController | undefined {
  const component = controllerComponent(d);
  if (component === undefined) return undefined;
  const spec = rec(d.spec);
  const template = rec(spec['template']);
  const podSpec = rec(template['spec']);
  const containers = list(podSpec['containers']).map(rec);
  const manager = containers.find((c) => c['name'] === 'manager') ?? containers[0] ?? {};
  const replicas = spec['replicas'];
  return {
    namespace: d.metadata.namespace ?? 'default',
    name: d.metadata.name,
    component,
    replicas: typeof replicas === 'number' ? replicas : 1,
    leaderElection: leaderElectionOf(list(manager['args'])),
    spread: spreadOf(podSpec, rec(rec(template['metadata'])['labels'])),
  };
}

/** Whether an object read from a mgmt/ directory or a list is a Deployment. */
export const isDeployment = (o: KubeObject) => o.kind === 'Deployment' && o.apiVersion === 'apps/v1';
