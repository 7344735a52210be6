/**
 * Reads what the plan needs from a kit written by `ferry generate`: its provenance.json (which
 * files exist, for which snapshot and target), kubeadm/steps.json (the kubeadm-side preparation),
 * talos/machines.json (which complete machine config each planned node boots with) and the probe
 * ServiceAccount's name. Never reads a file marked secret. The adapter side of the plan:
 * buildPlan takes the KitSummary as plain data; machineConfigPicker answers, per node, which
 * file the provision step applies.
 */
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { inputError } from '../errors.js';
import { type KitPrepStep, STEPS_JSON_KIND } from '../generate/kubeadm-prep/step.js';
import { type KitMachine, type KitMachines, MACHINES_JSON_KIND } from '../generate/talos/machines.js';
import { KIT } from '../knowledge/kit-paths.js';
import { readTextFile, requireDirectory } from '../util/input-file.js';

export interface KitFile {
  path: string;
  purpose: string;
  step: number;
  secret: boolean;
}

export interface KitSummary {
  /** The kit directory as given. */
  path: string;
  generatedAt: string | null;
  snapshot: { createdAt: string | null; source: string | null };
  target: {
    talosVersion: string | null;
    kubernetesVersion: string | null;
    kubeprism: string | null;
    provisioner: string | null;
    infra: string | null;
  };
  files: KitFile[];
  prepSteps: KitPrepStep[];
  /** The health-probe ServiceAccount (rbac/health-probe.yaml), when the kit has one. */
  probe: { namespace: string; name: string } | null;
  /** Id of the bootstrap token the kit's Talos nodes join with (its public part), when known. */
  bootstrapTokenId: string | null;
  /** talos/machines.json; null for a kit made before complete per-node configs. */
  machines: KitMachines | null;
  /** The kit's talosconfig (path inside the kit), when it has one. */
  talosconfig: string | null;
}

const REGENERATE = 'point --kit at a directory written by `ferry generate`, or generate it again';

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

async function readJson(dir: string, rel: string, shown: string): Promise<unknown> {
  const text = await readTextFile(join(dir, rel), {
    shown: `${shown}/${rel}`,
    what: 'the kit file',
    provide: REGENERATE,
  });
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw inputError(`${rel} is not valid JSON`, { file: `${shown}/${rel}` }, REGENERATE, cause);
  }
}

export async function readKit(dir: string, shown: string = dir): Promise<KitSummary> {
  await requireDirectory(dir, { shown, flag: '--kit', provide: REGENERATE });
  const prov = (await readJson(dir, 'provenance.json', shown)) as Record<string, unknown> | null;
  if (prov?.['kind'] !== 'FerryKitProvenance' || !Array.isArray(prov['files'])) {
    throw inputError(
      'provenance.json is not a ferry kit provenance file',
      { file: `${shown}/provenance.json`, field: 'kind' },
      REGENERATE,
    );
  }
  const files: KitFile[] = (prov['files'] as Record<string, unknown>[]).flatMap((f) =>
    typeof f?.['path'] === 'string'
      ? [
          {
            path: f['path'],
            purpose: str(f['purpose']) ?? '',
            step: typeof f['step'] === 'number' ? f['step'] : 0,
            secret: f['secret'] === true,
          },
        ]
      : [],
  );
  const snap = (prov['snapshot'] ?? {}) as Record<string, unknown>;
  const target = (prov['target'] ?? {}) as Record<string, unknown>;
  const hasSteps = files.some((f) => f.path === 'kubeadm/steps.json');
  return {
    path: shown,
    generatedAt: str(prov['generatedAt']),
    snapshot: { createdAt: str(snap['createdAt']), source: str(snap['source']) },
    target: {
      talosVersion: str(target['talosVersion']),
      kubernetesVersion: str(target['kubernetesVersion']),
      kubeprism: str(target['kubeprism']),
      provisioner: str(target['provisioner']),
      infra: str(target['infra']),
    },
    files,
    prepSteps: hasSteps ? await readPrepSteps(dir, shown) : [],
    probe: files.some((f) => f.path === 'rbac/health-probe.yaml' && !f.secret)
      ? await readProbe(dir, shown)
      : null,
    bootstrapTokenId: /^[a-z0-9]{6}$/.test(str(prov['bootstrapTokenId']) ?? '')
      ? str(prov['bootstrapTokenId'])
      : null,
    machines: files.some((f) => f.path === KIT.machines && !f.secret)
      ? await readMachines(dir, shown, new Set(files.map((f) => f.path)))
      : null,
    talosconfig: files.some((f) => f.path === KIT.talosconfig) ? KIT.talosconfig : null,
  };
}

/** talos/machines.json, checked: every path it names is a file the kit lists. */
async function readMachines(dir: string, shown: string, listed: Set<string>): Promise<KitMachines> {
  const file = `${shown}/${KIT.machines}`;
  const doc = (await readJson(dir, KIT.machines, shown)) as Record<string, unknown> | null;
  if (doc?.['kind'] !== MACHINES_JSON_KIND || !Array.isArray(doc['machines'])) {
    throw inputError(`${KIT.machines} is not a ferry machines index`, { file, field: 'kind' }, REGENERATE);
  }
  const text = (v: unknown, field: string): string => {
    if (typeof v !== 'string' || v === '')
      throw inputError(`${field} is missing`, { file, field }, REGENERATE);
    return v;
  };
  const path = (v: unknown, field: string): string => {
    const p = text(v, field);
    if (!listed.has(p))
      throw inputError(`${field} names ${p}, which the kit does not list`, { file, field }, REGENERATE);
    return p;
  };
  const g = (doc['genConfig'] ?? {}) as Record<string, unknown>;
  const machines = (doc['machines'] as Record<string, unknown>[]).map((m, i): KitMachine => {
    const at = `machines[${i}]`;
    const role = m?.['role'];
    if (role !== 'controlplane' && role !== 'worker')
      throw inputError(
        `${at}.role must be controlplane or worker`,
        { file, field: `${at}.role` },
        REGENERATE,
      );
    return {
      role,
      replaces: text(m['replaces'], `${at}.replaces`),
      hostname: m['hostname'] === null ? null : text(m['hostname'], `${at}.hostname`),
      config: path(m['config'], `${at}.config`),
      patches: Array.isArray(m['patches']) ? m['patches'].map((p, j) => path(p, `${at}.patches[${j}]`)) : [],
    };
  });
  return {
    kind: MACHINES_JSON_KIND,
    version: 1,
    secrets: path(doc['secrets'], 'secrets'),
    talosconfig: text(doc['talosconfig'], 'talosconfig'),
    genConfig: {
      clusterName: text(g['clusterName'], 'genConfig.clusterName'),
      endpoint: text(g['endpoint'], 'genConfig.endpoint'),
      talosVersion: text(g['talosVersion'], 'genConfig.talosVersion'),
      kubernetesVersion: text(g['kubernetesVersion'], 'genConfig.kubernetesVersion'),
      refused: str(g['refused']),
    },
    machines,
  };
}

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

async function readPrepSteps(dir: string, shown: string): Promise<KitPrepStep[]> {
  const file = `${shown}/kubeadm/steps.json`;
  const doc = (await readJson(dir, 'kubeadm/steps.json', shown)) as Record<string, unknown> | null;
  if (doc?.['kind'] !== STEPS_JSON_KIND || !Array.isArray(doc['steps'])) {
    throw inputError(
      'kubeadm/steps.json is not a ferry kubeadm-prep file',
      { file, field: 'kind' },
      REGENERATE,
    );
  }
  return (doc['steps'] as Record<string, unknown>[]).map((s, i) => {
    const field = (name: string) => {
      const v = s?.[name];
      if (typeof v !== 'string' || v === '')
        throw inputError(`step ${i + 1} has no ${name}`, { file, field: `steps[${i}].${name}` }, REGENERATE);
      return v;
    };
    const list = (name: string) =>
      Array.isArray(s[name]) ? (s[name] as unknown[]).filter((x): x is string => typeof x === 'string') : [];
    const scope = field('scope');
    if (scope !== 'each-control-plane' && scope !== 'cluster') {
      throw inputError(
        `step ${i + 1} has scope "${scope}"`,
        { file, field: `steps[${i}].scope` },
        'scope must be each-control-plane or cluster; generate the kit again',
      );
    }
    return {
      id: field('id'),
      title: field('title'),
      scope,
      nodes: list('nodes'),
      after: list('after'),
      apply: field('apply'),
      verify: field('verify'),
      undo: field('undo'),
      why: str(s['why']) ?? '',
    };
  });
}

async function readProbe(dir: string, shown: string): Promise<KitSummary['probe']> {
  const text = await readTextFile(join(dir, 'rbac/health-probe.yaml'), {
    shown: `${shown}/rbac/health-probe.yaml`,
    what: 'the kit file',
    provide: REGENERATE,
  });
  for (const doc of parseAllDocuments(text)) {
    const o = doc.toJS() as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
    if (o?.kind === 'ServiceAccount' && typeof o.metadata?.name === 'string') {
      return {
        namespace: typeof o.metadata.namespace === 'string' ? o.metadata.namespace : 'default',
        name: o.metadata.name,
      };
    }
  }
  return null;
}
