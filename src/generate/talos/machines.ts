/**
 * One complete machine config per planned node — each control-plane replacement and each worker
 * replacement — and talos/machines.json, the index `ferry plan` reads to point every provision
 * step at its node's file. A complete config is what `talosctl gen config --with-secrets
 * secrets.yaml` writes for the role, with the node's patches merged in the order listed: the role
 * patch, then the node patch (control planes: hostname and own labels) or the worker's group patch
 * (its pool's labels and taints; workers keep the hostname Talos gives them).
 */
import { KIT } from '../../knowledge/kit-paths.js';
import type { TalosSecretsBundle } from '../secrets/bundle.js';
import type { TalosDoc } from './doc.js';
import { baseConfig } from './full.js';
import { legacyGroupPatch, legacyNodePatch, legacyRolePatch } from './legacy.js';
import { mergeDocs } from './merge.js';
import type { Role, TalosValues } from './model.js';
import { multidocGroupPatch, multidocNodePatch, multidocRolePatch } from './multidoc.js';

export const MACHINES_JSON_KIND = 'FerryTalosMachines';

/** One planned node in talos/machines.json. Paths are relative to the kit. */
export interface KitMachine {
  role: Role;
  /** The kubeadm node it replaces. */
  replaces: string;
  /** The hostname its config pins (control planes); null: the one Talos gives it (workers). */
  hostname: string | null;
  /** The complete machine config to apply (holds keys, 0600). */
  config: string;
  /** The patches that make the same config from `talosctl gen config`, in order. */
  patches: string[];
}

/** talos/machines.json. */
export interface KitMachines {
  kind: typeof MACHINES_JSON_KIND;
  version: 1;
  secrets: string;
  talosconfig: string;
  /** The arguments of `talosctl gen config` that, with `patches`, give the same configs. */
  genConfig: {
    clusterName: string;
    endpoint: string;
    /** Version contract, "v1.13". */
    talosVersion: string;
    /** Without the "v", as talosctl takes it. */
    kubernetesVersion: string;
    /** Why talosctl would refuse this kit's secrets.yaml, when it would; null when it takes it. */
    refused: string | null;
  };
  machines: KitMachine[];
}

export interface PlannedMachine extends KitMachine {
  docs: TalosDoc[];
  /** For the file's header and purpose: "control plane talos-cp-1 (replaces cp-1)". */
  about: string;
}

/** The documents of a role patch, in the form the target release reads. */
export function rolePatchDocs(v: TalosValues, role: Role): TalosDoc[] {
  return v.release.configFormat === 'multidoc' ? multidocRolePatch(v, role) : legacyRolePatch(v, role);
}

export function nodePatchDocs(v: TalosValues, r: TalosValues['controlPlane']['replacements'][number]) {
  return v.release.configFormat === 'multidoc'
    ? multidocNodePatch(r.hostname, r.own)
    : legacyNodePatch(v, r.hostname, r.own);
}

export function groupPatchDocs(v: TalosValues, g: TalosValues['workers']['groups'][number]): TalosDoc[] {
  return v.release.configFormat === 'multidoc' ? multidocGroupPatch(g.own) : legacyGroupPatch(g.own);
}

/** The complete config of a role before any node patch: gen config's output + the role patch. */
export function roleConfigDocs(v: TalosValues, bundle: TalosSecretsBundle, role: Role): TalosDoc[] {
  return mergeDocs(baseConfig(v, bundle, role), rolePatchDocs(v, role));
}

export function plannedMachines(v: TalosValues, bundle: TalosSecretsBundle): PlannedMachine[] {
  const cp = roleConfigDocs(v, bundle, 'controlplane');
  const worker = roleConfigDocs(v, bundle, 'worker');
  const out: PlannedMachine[] = [];
  for (const r of v.controlPlane.replacements) {
    const hostname = r.hostname.value;
    out.push({
      role: 'controlplane',
      replaces: r.replaces,
      hostname,
      config: KIT.controlPlaneConfig(hostname),
      patches: [KIT.controlPlanePatch, KIT.nodePatch(hostname)],
      docs: mergeDocs(cp, nodePatchDocs(v, r)),
      about: `control plane ${hostname} (replaces ${r.replaces})`,
    });
  }
  for (const name of v.workers.nodes) {
    const group = v.workers.groups.find((g) => g.nodes.includes(name));
    out.push({
      role: 'worker',
      replaces: name,
      hostname: null,
      config: KIT.workerConfig(name),
      patches: group ? [KIT.workerPatch, KIT.workerGroupPatch(group.name)] : [KIT.workerPatch],
      docs: group ? mergeDocs(worker, groupPatchDocs(v, group)) : worker,
      about: `the worker replacing ${name}${group ? ` (group ${group.name})` : ''}`,
    });
  }
  return out;
}

/**
 * talosctl validates the bundle before generating (talos.md §1 `Validate`): it requires one
 * encryption secret, which a cluster without a Talos-named key deliberately lacks.
 */
function genConfigRefusal(bundle: TalosSecretsBundle): string | null {
  if (bundle.secrets.secretboxEncryptionSecret || bundle.secrets.aescbcEncryptionSecret) return null;
  return 'talosctl gen config refuses this secrets.yaml: it has no encryption secret (the cluster has no key under a Talos name yet, encryption.key-name)';
}

export function kitMachines(v: TalosValues, bundle: TalosSecretsBundle, machines: KitMachine[]): KitMachines {
  return {
    kind: MACHINES_JSON_KIND,
    version: 1,
    secrets: KIT.secrets,
    talosconfig: KIT.talosconfig,
    genConfig: {
      clusterName: v.clusterName.value,
      endpoint: v.endpoint.value,
      talosVersion: `v${v.release.minor}`,
      kubernetesVersion: v.kubernetesVersion.value.replace(/^v/, ''),
      refused: genConfigRefusal(bundle),
    },
    machines: machines.map(({ role, replaces, hostname, config, patches }) => ({
      role,
      replaces,
      hostname,
      config,
      patches,
    })),
  };
}
