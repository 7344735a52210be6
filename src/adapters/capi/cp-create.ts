/**
 * Adds one Talos control-plane Machine with the TalosControlPlane kept paused (adoption recipe
 * (c), capi.md §2): raises its replicas to `target` while paused (so a later unpause scales
 * nothing), then creates the infrastructure machine, TalosConfig and Machine CACPPT would
 * (capi/cp-machine.ts), every one checked against the CRDs before the first is sent. The caller
 * has checked that the TalosControlPlane is paused and the Cluster is not.
 */
import { cpMachineObjects, infraTemplateRef, nameSuffix } from '../../capi/cp-machine.js';
import { tcpScale } from '../../capi/tcp-scale.js';
import { FerryError } from '../../errors.js';
import type { CrdValidator } from '../../generate/schema/crd.js';
import { gateError } from '../../ports/stop.js';
import type { KubeObject } from '../../snapshot/model.js';
import type { MgmtApi } from './mgmt-api.js';

export async function addControlPlaneMachine(
  api: MgmtApi,
  crds: CrdValidator,
  target: number,
  log: (line: string) => void,
): Promise<string> {
  const where = `TalosControlPlane ${api.names.namespace}/${api.names.controlPlane}`;
  const badTcp = (why: string) =>
    gateError(
      `${where}: ${why}`,
      'adopt again from the kit (the capi-adopt step of phase 1), then run ferry run --resume',
    );
  const raw = await api.controlPlaneObject();
  if (!raw) throw gateError(`${where} does not exist`, 'adopt first (ferry capi adopt KIT), then retry');
  const ref = infraTemplateRef(raw);
  if ('error' in ref) throw badTcp(ref.error);
  const template = await api.getObject(ref.apiVersion, ref.kind, ref.name);
  if (!template)
    throw gateError(
      `${ref.kind} ${api.names.namespace}/${ref.name}, the TalosControlPlane's infrastructure template, does not exist`,
      'adopt again (ferry capi adopt KIT), then retry',
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
  const current = typeof raw.spec?.['replicas'] === 'number' ? (raw.spec['replicas'] as number) : 0;
  if (current !== target) {
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
    const undone =
      created.length === 0
        ? ''
        : left.length > 0
          ? `; left behind, delete by hand: ${left.join(', ')}`
          : `; deleted again: ${created.map(name).join(', ')}`;
    throw gateError(
      `creating the control-plane Machine ${built.name} failed at ${name(objects[created.length]!)}: ${(err as Error).message}${undone}`,
      left.length
        ? `delete them (kubectl --kubeconfig "$MGMT_KUBECONFIG" -n ${api.names.namespace} delete ${left.join(' ')}), fix the cause, then run ferry run --resume`
        : 'fix the cause (the management cluster answered the error above), then run ferry run --resume',
      err,
    );
  }
  log(`Machine ${built.name} created with the TalosControlPlane paused`);
  return built.name;
}

/** CRD errors of one object; an infrastructure kind without a CRD here is checked as its template. */
function crdErrors(crds: CrdValidator, o: KubeObject): string[] {
  const obj = crds.knows(o.apiVersion, o.kind)
    ? o
    : crds.knows(o.apiVersion, `${o.kind}Template`)
      ? { ...o, kind: `${o.kind}Template`, spec: { template: { spec: o.spec } } }
      : undefined;
  if (!obj) return [`${o.kind} ${o.metadata.name}: no CRD for ${o.apiVersion} ${o.kind}`];
  return crds.validate(obj).map((e) => `${e.document} ${e.path} ${e.message}`);
}
