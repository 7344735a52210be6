/**
 * What the plan takes from a kit (read by kit/read.ts): machineConfigPicker answers, per node,
 * which file the provision step applies; talosconfigPath, where the runbook finds the talosconfig.
 */

import type { KitSummary } from '../kit/read.js';
import { KIT } from '../knowledge/kit-paths.js';

/** How an operator would make the same config with talosctl (commands.ts renders it). */
export interface OwnConfigBuild {
  secrets: string;
  clusterName: string;
  endpoint: string;
  talosVersion: string;
  kubernetesVersion: string;
  role: 'controlplane' | 'worker';
  patches: string[];
  /** File talosctl writes, in the working directory. */
  output: string;
}

/**
 * What a provision step applies: the node's complete config from the kit (and how to build it
 * yourself from the patches, or why talosctl cannot), or nothing, with the reason — never a patch,
 * which would boot the node with a partial config.
 */
export type MachineConfigChoice =
  | {
      kind: 'kit';
      file: string;
      build:
        | { kind: 'gen-config'; args: OwnConfigBuild }
        | { kind: 'refused'; why: string; patches: string[] };
    }
  | { kind: 'none'; why: string };

export type MachineConfigPicker = (
  role: 'controlplane' | 'worker',
  replaces: string,
  /** The hostname the plan gives the node (null: Talos chooses), checked against the kit's. */
  hostname?: string | null,
) => MachineConfigChoice;

/** The kit's complete machine config for each planned node, from talos/machines.json. */
export function machineConfigPicker(kit: KitSummary | null): MachineConfigPicker {
  return (role, replaces, hostname) => {
    if (!kit)
      return { kind: 'none', why: 'no kit: run ferry generate and pass its directory to ferry plan --kit' };
    const index = kit.machines;
    if (!index)
      return {
        kind: 'none',
        why: `the kit has no ${KIT.machines} (made by an older ferry): its patches are not complete configs; generate the kit again`,
      };
    const m = index.machines.find((x) => x.role === role && x.replaces === replaces);
    if (!m)
      return {
        kind: 'none',
        why: `the kit has no complete config for the ${role} replacing ${replaces}: generate the kit from this snapshot again`,
      };
    if (hostname !== undefined && hostname !== null && m.hostname !== null && m.hostname !== hostname)
      return {
        kind: 'none',
        why: `the kit's config for the node replacing ${replaces} pins hostname ${m.hostname}, the plan names it ${hostname}: generate the kit again`,
      };
    const at = (p: string) => `${kit.path}/${p}`;
    const patches = m.patches.map(at);
    const g = index.genConfig;
    return {
      kind: 'kit',
      file: at(m.config),
      build:
        g.refused !== null
          ? { kind: 'refused', why: g.refused, patches }
          : {
              kind: 'gen-config',
              args: {
                secrets: at(index.secrets),
                clusterName: g.clusterName,
                endpoint: g.endpoint,
                talosVersion: g.talosVersion,
                kubernetesVersion: g.kubernetesVersion,
                role,
                patches,
                output: m.config.split('/').pop() ?? `${replaces}.yaml`,
              },
            },
    };
  };
}

/** The kit's talosconfig as the runbook names it (relative to where ferry plan ran), if any. */
export function talosconfigPath(kit: KitSummary | null): string | null {
  return kit?.talosconfig ? `${kit.path}/${kit.talosconfig}` : null;
}
