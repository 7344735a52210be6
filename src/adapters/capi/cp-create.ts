/**
 * Adds one Talos control-plane Machine with the TalosControlPlane kept paused (adoption recipe
 * (c), capi.md §2): raises its replicas to `target` while paused (so a later unpause scales
 * nothing), then creates the infrastructure machine, TalosConfig and Machine CACPPT would
 * (capi/cp-machine.ts), every one checked against the CRDs and against what the server serves
 * (discovery) before the first write. A create that fails takes back what this attempt did, the
 * replica bump included. The caller has checked that the TalosControlPlane is paused and the
 * Cluster is not.
 */
import { cpMachineObjects, infraTemplateRef, nameSuffix } from '../../capi/cp-machine.js';
import { capiKubectl, MGMT_KUBECTL } from '../../capi/kubectl-commands.js';
import { tcpScale } from '../../capi/tcp-scale.js';
import { FerryError } from '../../errors.js';
import type { CrdValidator } from '../../generate/schema/crd.js';
import { gateError } from '../../ports/stop.js';
import type { KubeObject } from '../../snapshot/model.js';
import type { MgmtApi } from './mgmt-api.js';

export interface AddControlPlaneOptions {
  /** The TalosControlPlane's replicas once this Machine exists. */
  target: number;
  log: (line: string) => void;
  /** What the operator runs again once the cause is fixed: the command that called this. */
  retry: string;
}

export async function addControlPlaneMachine(
  api: MgmtApi,
  crds: CrdValidator,
  { target, log, retry }: AddControlPlaneOptions,
): Promise<string> {
  const where = `TalosControlPlane ${api.names.namespace}/${api.names.controlPlane}`;
  const badTcp = (why: string) =>
    gateError(`${where}: ${why}`, `adopt again from the kit (ferry capi adopt KIT), then ${retry}`);
  const raw = await api.controlPlaneObject();
  if (!raw) throw gateError(`${where} does not exist`, `adopt first (ferry capi adopt KIT), then ${retry}`);
  const ref = infraTemplateRef(raw);
  if ('error' in ref) throw badTcp(ref.error);
  const template = await api.getObject(ref.apiVersion, ref.kind, ref.name);
  if (!template)
    throw gateError(
      `${ref.kind} ${api.names.namespace}/${ref.name}, the TalosControlPlane's infrastructure template, does not exist`,
      `adopt again (ferry capi adopt KIT), then ${retry}`,
    );
  const built = cpMachineObjects({ tcp: raw, template, cluster: api.names.cluster, suffix: nameSuffix() });
  if ('error' in built) throw badTcp(built.error);
  const objects = [built.infra, built.talosConfig, built.machine];
  const invalid = objects.flatMap((o) => crdErrors(crds, o));
  if (invalid.length > 0)
    throw new FerryError(
      'internal',
      `the control-plane Machine objects do not match their CRDs: ${invalid.join('; ')}`,
      { remediation: 'this is a ferry bug: report it with the kit; nothing was created' },
    );
  const unserved = await unservedKinds(api, objects);
  if (unserved.length > 0)
    // The server's setup, not ferry's input or a gate: exit 2 as adopt's "serves no" is.
    throw new FerryError(
      'input',
      `the management cluster serves no ${unserved.join(', ')}: creating the control-plane Machine would fail part-way; nothing was changed`,
      {
        remediation: `install the provider that owns ${unserved.length === 1 ? 'it' : 'them'} (clusterctl init --infrastructure …), or its CRD from ferry's schemas/capi, then ${retry}`,
      },
    );
  const current = typeof raw.spec?.['replicas'] === 'number' ? (raw.spec['replicas'] as number) : 0;
  const bumped = current !== target;
  if (bumped) {
    const s = tcpScale(current, target);
    if (s.kind === 'refused') throw gateError(s.reason, s.remediation);
    await api.setControlPlaneReplicas(target);
  }
  log(
    `TalosControlPlane ${api.names.controlPlane} kept paused: replicas ${current} → ${target}; ferry creates Machine ${built.name} as it would`,
  );
  const created: KubeObject[] = [];
  try {
    for (const o of objects) {
      await api.create(o);
      created.push(o);
    }
  } catch (err) {
    // A retry makes a new name: what this attempt made would be left behind (an infrastructure
    // machine with a VM and no Machine owning it). Take it back, newest first.
    const name = (o: KubeObject) => `${o.kind}/${o.metadata.name}`;
    const left: string[] = [];
    for (const o of [...created].reverse()) await api.delete(o).catch(() => left.push(name(o)));
    // The bump too: left at N with N−1 Machines, an unpause would make CACPPT create the Machine itself.
    let replicasLeft = false;
    if (bumped) await api.setControlPlaneReplicas(current).catch(() => (replicasLeft = true));
    const undone = [
      created.length > 0 && left.length === 0 ? `deleted again: ${created.map(name).join(', ')}` : '',
      left.length > 0 ? `left behind, delete by hand: ${left.join(', ')}` : '',
      bumped && !replicasLeft ? `replicas set back to ${current}` : '',
      replicasLeft ? `replicas left at ${target} (setting them back to ${current} failed)` : '',
    ].filter(Boolean);
    const byHand = [
      left.length > 0 ? capiKubectl.deleteObjects(MGMT_KUBECTL, api.names.namespace, left) : '',
      replicasLeft
        ? capiKubectl.scaleTcp(MGMT_KUBECTL, api.names.namespace, api.names.controlPlane, current)
        : '',
    ].filter(Boolean);
    throw gateError(
      `creating the control-plane Machine ${built.name} failed at ${name(objects[created.length]!)}: ${(err as Error).message}${undone.length ? `; ${undone.join('; ')}` : ''}`,
      byHand.length
        ? `undo by hand (${byHand.join('; ')}), fix the cause, then ${retry}`
        : `fix the cause (the management cluster answered the error above), then ${retry}`,
      err,
    );
  }
  log(`Machine ${built.name} created with the TalosControlPlane paused`);
  return built.name;
}

/** CRD errors of one object against ferry's copy of the upstream CRDs (schemas/capi). */
function crdErrors(crds: CrdValidator, o: KubeObject): string[] {
  if (!crds.knows(o.apiVersion, o.kind))
    return [`${o.kind} ${o.metadata.name}: no CRD for ${o.apiVersion} ${o.kind}`];
  return crds.validate(o).map((e) => `${e.document} ${e.path} ${e.message}`);
}

/** "ProxmoxMachine (infrastructure.cluster.x-k8s.io/v1alpha1)" for each kind the server does not serve. */
async function unservedKinds(api: MgmtApi, objects: KubeObject[]): Promise<string[]> {
  const out: string[] = [];
  for (const o of objects) {
    const kinds = await api.servedKinds(o.apiVersion);
    if (!kinds.has(o.kind)) out.push(`${o.kind} (${o.apiVersion})`);
  }
  return out;
}
