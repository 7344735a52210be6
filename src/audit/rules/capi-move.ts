/**
 * Moving the management cluster: `clusterctl move` (and `ferry mgmt backup`, which follows its
 * rules) refuses a paused Cluster and needs every Machine with a Node (capi.md H13, §5.1), carries
 * no status (H12), and finds its providers through the clusterctl inventory, which the CAPI
 * Operator does not write (H15, §5.2, §6).
 */

import { isReady, type PauseProblem, pauseProblems } from '../../capi/paused.js';
import {
  CONTROL_PLANE_LABEL,
  clusterNameOf,
  clusters,
  machineDeployments,
  ofKind,
  PAUSED_ANNOTATION,
  providerVersions,
  spec,
  status,
  talosControlPlanes,
} from '../../capi/view.js';
import type { KubeObject, MgmtSnapshot } from '../../snapshot/model.js';
import type { Rule, RuleFinding } from '../rule.js';
import { DOCS, withMgmt } from './capi-mgmt.js';
import { objectEvidence } from './shared.js';

const conditionFalse = (o: KubeObject, type: string) =>
  ((o.status?.conditions ?? []) as { type?: string; status?: string }[]).some(
    (c) => c.type === type && c.status === 'False',
  );
const num = (v: unknown) => (typeof v === 'number' ? v : 0);

/** Why a Cluster cannot be moved as it is: not Ready, infrastructure or control plane not up (move checks both). */
function clusterNotReady(c: KubeObject): string[] {
  const out: string[] = [];
  if (!isReady(c)) out.push('no Ready or Available condition is True');
  // v1beta2 status.initialization, v1beta1 the flat fields.
  if (
    status(c, 'initialization', 'infrastructureProvisioned') !== true &&
    status(c, 'infrastructureReady') !== true
  )
    out.push('its infrastructure is not provisioned');
  if (
    status(c, 'initialization', 'controlPlaneInitialized') !== true &&
    status(c, 'controlPlaneReady') !== true
  )
    out.push('its control plane is not initialized');
  return out;
}

function machineUnsteady(x: KubeObject): string[] {
  const out: string[] = [];
  if (x.metadata.deletionTimestamp) out.push(`it is being deleted (since ${x.metadata.deletionTimestamp})`);
  const phase = status(x, 'phase');
  if (phase !== 'Running')
    out.push(`its phase is ${typeof phase === 'string' ? phase : 'unset'}, not Running`);
  if (typeof status(x, 'nodeRef', 'name') !== 'string') out.push('it has no nodeRef');
  return out;
}

/**
 * A TalosControlPlane or MachineDeployment between two replica counts, or rolling its Machines.
 * `machines`: for a TalosControlPlane, the cluster's control-plane Machines — its own status count
 * is not updated while it is paused, as it is during a migration.
 */
function rolling(o: KubeObject, machines?: number): string[] {
  const out: string[] = [];
  const want = num(spec(o, 'replicas'));
  const have = machines ?? num(status(o, 'replicas'));
  if (want !== have) out.push(`${have} replicas exist, ${want} wanted`);
  // MachineDeployment: v1beta2 upToDateReplicas, v1beta1 updatedReplicas.
  const upToDate = status(o, 'upToDateReplicas') ?? status(o, 'updatedReplicas');
  if (typeof upToDate === 'number' && upToDate < want) out.push(`only ${upToDate} of ${want} are up to date`);
  // TalosControlPlane conditions (v1beta1 style): a rollout or a resize in flight.
  for (const type of ['MachinesSpecUpToDate', 'Resized'])
    if (conditionFalse(o, type)) out.push(`condition ${type} is False`);
  return out;
}

function pauseText(p: PauseProblem): string {
  return p.why === 'cluster-paused'
    ? `${p.object} is paused: clusterctl move refuses to move it, and ferry mgmt backup refuses it too`
    : `${p.object} carries the ${PAUSED_ANNOTATION} annotation: cluster ${p.cluster} is mid-migration (ferry keeps the TalosControlPlane paused until no kubeadm member remains), and a backup now would restore a half-migrated state`;
}

const STEADY_FIX =
  'Back up or move the management cluster only before the migration starts or after it has finished, once every Cluster is Ready and unpaused, every Machine Running with a Node and no rollout in flight; after a restore, set the TalosControlPlane status.bootstrapped again (status is not carried).';

export const movePausedOrUnstable: Rule = {
  id: 'capi.move-paused-or-unstable',
  family: 'capi',
  severity: 'risk',
  title: 'Management cluster not steady enough to move or back up',
  inputs: ['mgmt'],
  reads: [],
  requires: ['mgmt'],
  description:
    'clusterctl move refuses a paused Cluster and one whose Machines lack a Node, and carries no status: a move or backup of a cluster that is paused, not Ready, or rolling its Machines fails or restores an inconsistent state.',
  docs: DOCS('capi.move-paused-or-unstable'),
  check: (ctx) =>
    withMgmt(ctx, (m) => {
      const out: RuleFinding[] = [];
      for (const c of clusters(m)) {
        const mine = ofCluster(m, c).filter((o) => o.kind !== 'Secret');
        for (const o of [c, ...mine]) {
          // One object at a time, so each problem names the object it is about.
          const [p] = o === c ? pauseProblems([c], []) : pauseProblems([], [o]);
          if (!p) continue;
          const bySpec = o === c && c.spec?.paused === true;
          out.push({
            message: `${pauseText(p)}.`,
            evidence: [
              objectEvidence(o, bySpec ? 'spec.paused' : `metadata.annotations["${PAUSED_ANNOTATION}"]`, {
                observed: bySpec ? 'true' : 'present',
                expected: 'unpaused for a move or backup',
              }),
            ],
            remediation: STEADY_FIX,
          });
        }
        const notReady = clusterNotReady(c);
        if (notReady.length > 0)
          out.push({
            message: `Cluster ${c.metadata.name} is not steady: ${notReady.join('; ')}. clusterctl move refuses a Cluster whose infrastructure or control plane is not up, and status it does move is not restored.`,
            evidence: [
              objectEvidence(c, 'status.conditions', {
                observed: notReady.join('; '),
                expected: 'Ready/Available True, infrastructure provisioned, control plane initialized',
              }),
            ],
            remediation: STEADY_FIX,
          });
        for (const x of mine.filter(
          (o) => o.kind === 'Machine' && o.apiVersion.startsWith('cluster.x-k8s.io/'),
        )) {
          const why = machineUnsteady(x);
          if (why.length > 0)
            out.push({
              message: `Machine ${x.metadata.name} of Cluster ${c.metadata.name} is not steady: ${why.join('; ')}. clusterctl move needs every Machine with a Node, and a Machine mid-provisioning or mid-deletion is restored half-done.`,
              evidence: [
                objectEvidence(x, 'status.phase', {
                  observed: why.join('; '),
                  expected: 'Running, with a nodeRef',
                }),
              ],
              remediation: STEADY_FIX,
            });
        }
        const scaled = new Set([...talosControlPlanes(m), ...machineDeployments(m)]);
        const cpMachines = mine.filter(
          (o) =>
            o.kind === 'Machine' &&
            o.apiVersion.startsWith('cluster.x-k8s.io/') &&
            o.metadata.labels?.[CONTROL_PLANE_LABEL] !== undefined &&
            !o.metadata.deletionTimestamp,
        ).length;
        for (const o of mine.filter((x) => scaled.has(x))) {
          const why = rolling(o, o.kind === 'TalosControlPlane' ? cpMachines : undefined);
          if (why.length > 0)
            out.push({
              message: `${o.kind} ${o.metadata.name} is mid-roll: ${why.join('; ')}. A move or backup now captures Machines being replaced, and the rollout restarts from a status that is not restored.`,
              evidence: [
                objectEvidence(o, 'status.replicas', {
                  observed: why.join('; '),
                  expected: `${num(spec(o, 'replicas'))} replicas, all up to date`,
                }),
              ],
              remediation: STEADY_FIX,
            });
        }
      }
      return out;
    }),
};

/** The objects that belong to Cluster `c`: same namespace, its cluster-name label or spec.clusterName. */
function ofCluster(m: MgmtSnapshot, c: KubeObject): KubeObject[] {
  return m.objects.filter(
    (o) => o !== c && o.metadata.namespace === c.metadata.namespace && clusterNameOf(o) === c.metadata.name,
  );
}

/** The CAPI Operator's provider kinds (operator.cluster.x-k8s.io); each names the clusterctl type of the same name. */
const OPERATOR_KINDS = [
  'CoreProvider',
  'BootstrapProvider',
  'ControlPlaneProvider',
  'InfrastructureProvider',
  'IPAMProvider',
  'AddonProvider',
  'RuntimeExtensionProvider',
] as const;

export const operatorInventory: Rule = {
  id: 'capi.operator-inventory',
  family: 'capi',
  severity: 'info',
  title: 'Providers installed by the CAPI Operator have no clusterctl inventory',
  inputs: ['mgmt'],
  reads: [],
  requires: ['mgmt'],
  description:
    'clusterctl finds providers through its inventory (providers.clusterctl.cluster.x-k8s.io), which the CAPI Operator does not write: clusterctl move --to-kubeconfig into such a cluster fails "provider not found in the target cluster", and clusterctl upgrade does not see them.',
  docs: DOCS('capi.operator-inventory'),
  check: (ctx) =>
    withMgmt(ctx, (m) => {
      const inventory = providerVersions(m);
      const out: RuleFinding[] = [];
      for (const kind of OPERATOR_KINDS)
        for (const p of ofKind(m, kind, 'operator.cluster.x-k8s.io')) {
          // The operator names the provider by metadata.name (talos, proxmox, cluster-api).
          if (inventory.some((i) => i.type === kind && i.providerName === p.metadata.name)) continue;
          const version = spec(p, 'version');
          out.push({
            message: `${kind} ${p.metadata.name}${typeof version === 'string' ? ` ${version}` : ''} was installed by the CAPI Operator and has no clusterctl inventory entry: clusterctl move --to-kubeconfig into this cluster fails with "provider … not found in the target cluster", a move out of it does not find the Secrets in that provider's namespace, and clusterctl upgrade does not see it.`,
            evidence: [
              objectEvidence(p, 'metadata.name', {
                observed: `no clusterctl Provider with type ${kind} and providerName ${p.metadata.name}`,
                expected: 'an inventory Provider (clusterctl.cluster.x-k8s.io/v1alpha3)',
              }),
            ],
            remediation:
              'Move through a directory, which skips the inventory check: mkdir -p DIR && clusterctl move --to-directory DIR (with the source kubeconfig), then clusterctl move --from-directory DIR --kubeconfig TARGET; or create the inventory Provider objects (clusterctl.cluster.x-k8s.io/v1alpha3 Provider, one per provider) by hand.',
          });
        }
      return out;
    }),
};

export const CAPI_MOVE_RULES: Rule[] = [movePausedOrUnstable, operatorInventory];
