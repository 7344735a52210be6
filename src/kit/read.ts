/**
 * Reads a kit written by `ferry generate`: its provenance.json (which files exist, for which
 * snapshot and target), kubeadm/steps.json (the kubeadm-side preparation), talos/machines.json
 * (which complete machine config each planned node boots with) and the probe ServiceAccount's
 * name — what `ferry plan --kit` needs — and, for `ferry audit --kit`, the text of every file it
 * lists that is not secret. Never reads a file marked secret. The adapter side: the plan and the
 * audit take what it returns as plain data.
 */
import { join } from 'node:path';
import { inputError } from '../errors.js';
import { type KitPrepStep, STEPS_JSON_KIND } from '../generate/kubeadm-prep/step.js';
import { type KitMachine, type KitMachines, MACHINES_JSON_KIND } from '../generate/talos/machines.js';
import { KIT } from '../knowledge/kit-paths.js';
import { jsonError, parseYamlDocuments } from '../snapshot/yaml.js';
import { readTextFile, requireDirectory } from '../util/input-file.js';
import { type CapiNames, readCapiNames } from './capi-names.js';

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
  /** A capi kit's Cluster API object names (capi/cluster.yaml); absent for other kits. */
  capi?: CapiNames;
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
    throw jsonError(text, cause as Error, { file: `${shown}/${rel}` }, REGENERATE);
  }
}

/** A field of a kit file: absent (or null) is null, a string is itself, anything else is a broken kit. */
function optString(o: Record<string, unknown>, name: string, file: string, at: string): string | null {
  const v = o[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string')
    throw inputError(
      `${at}${name} is a ${kindOf(v)}, not a string`,
      { file, field: `${at}${name}` },
      REGENERATE,
    );
  return v;
}

/** An object-valued field of a kit file: absent is {}, a non-object is a broken kit. */
function optObject(o: Record<string, unknown>, name: string, file: string): Record<string, unknown> {
  const v = o[name];
  if (v === undefined || v === null) return {};
  if (!isRecord(v))
    throw inputError(`${name} is a ${kindOf(v)}, not a mapping`, { file, field: name }, REGENERATE);
  return v;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function kindOf(v: unknown): string {
  return Array.isArray(v) ? 'list' : v === null ? 'null' : typeof v;
}

export async function readKit(dir: string, shown: string = dir): Promise<KitSummary> {
  await requireDirectory(dir, { shown, flag: '--kit', provide: REGENERATE });
  const provFile = `${shown}/${KIT.provenance}`;
  const prov = await readJson(dir, KIT.provenance, shown);
  if (!isRecord(prov) || prov['kind'] !== 'FerryKitProvenance') {
    throw inputError(
      `${KIT.provenance} is not a ferry kit provenance file`,
      { file: provFile, field: 'kind' },
      REGENERATE,
    );
  }
  if (!Array.isArray(prov['files']))
    throw inputError(
      `files is a ${kindOf(prov['files'])}, not a list`,
      { file: provFile, field: 'files' },
      REGENERATE,
    );
  const files: KitFile[] = (prov['files'] as unknown[]).map((f, i) => {
    const at = `files[${i}].`;
    if (!isRecord(f) || typeof f['path'] !== 'string' || f['path'] === '')
      throw inputError(`${at}path is missing`, { file: provFile, field: `${at}path` }, REGENERATE);
    const step = f['step'] ?? 0;
    if (typeof step !== 'number' || !Number.isInteger(step))
      throw inputError(`${at}step is not a whole number`, { file: provFile, field: `${at}step` }, REGENERATE);
    const secret = f['secret'] ?? false;
    if (typeof secret !== 'boolean')
      throw inputError(
        `${at}secret is not true or false`,
        { file: provFile, field: `${at}secret` },
        REGENERATE,
      );
    return { path: f['path'], purpose: optString(f, 'purpose', provFile, at) ?? '', step, secret };
  });
  const snap = optObject(prov, 'snapshot', provFile);
  const target = optObject(prov, 'target', provFile);
  const targetField = (name: string) => optString(target, name, provFile, 'target.');
  const hasSteps = files.some((f) => f.path === KIT.prepSteps);
  return {
    path: shown,
    generatedAt: optString(prov, 'generatedAt', provFile, ''),
    snapshot: {
      createdAt: optString(snap, 'createdAt', provFile, 'snapshot.'),
      source: optString(snap, 'source', provFile, 'snapshot.'),
    },
    target: {
      talosVersion: targetField('talosVersion'),
      kubernetesVersion: targetField('kubernetesVersion'),
      kubeprism: targetField('kubeprism'),
      provisioner: targetField('provisioner'),
      infra: targetField('infra'),
    },
    files,
    prepSteps: hasSteps ? await readPrepSteps(dir, shown) : [],
    probe: files.some((f) => f.path === KIT.healthProbe && !f.secret) ? await readProbe(dir, shown) : null,
    bootstrapTokenId: /^[a-z0-9]{6}$/.test(str(prov['bootstrapTokenId']) ?? '')
      ? str(prov['bootstrapTokenId'])
      : null,
    machines: files.some((f) => f.path === KIT.machines && !f.secret)
      ? await readMachines(dir, shown, new Set(files.map((f) => f.path)))
      : null,
    talosconfig: files.some((f) => f.path === KIT.talosconfig) ? KIT.talosconfig : null,
    ...(targetField('provisioner') === 'capi' &&
      files.some((f) => f.path === KIT.capiCluster && !f.secret) && {
        capi: await readCapiNames(dir, shown),
      }),
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

async function readPrepSteps(dir: string, shown: string): Promise<KitPrepStep[]> {
  const file = `${shown}/${KIT.prepSteps}`;
  const doc = (await readJson(dir, KIT.prepSteps, shown)) as Record<string, unknown> | null;
  if (doc?.['kind'] !== STEPS_JSON_KIND || !Array.isArray(doc['steps'])) {
    throw inputError(
      `${KIT.prepSteps} is not a ferry kubeadm-prep file`,
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
    // A list the plan turns into steps: a wrong type would silently drop nodes or ordering.
    const list = (name: string): string[] => {
      const v = s?.[name] ?? [];
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
        throw inputError(
          `step ${i + 1}: ${name} is not a list of names`,
          { file, field: `steps[${i}].${name}` },
          REGENERATE,
        );
      return v as string[];
    };
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
  const text = await readTextFile(join(dir, KIT.healthProbe), {
    shown: `${shown}/${KIT.healthProbe}`,
    what: 'the kit file',
    provide: REGENERATE,
  });
  for (const doc of parseYamlDocuments(text, { file: `${shown}/${KIT.healthProbe}` })) {
    const o = doc.value as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
    if (o?.kind === 'ServiceAccount' && typeof o.metadata?.name === 'string') {
      return {
        namespace: typeof o.metadata.namespace === 'string' ? o.metadata.namespace : 'default',
        name: o.metadata.name,
      };
    }
  }
  return null;
}

/** A kit as `ferry audit --kit` reads it: the summary and the text of the files it may read. */
export interface KitContents {
  summary: KitSummary;
  /** Text of every file provenance.json lists that is not secret, by its path inside the kit. */
  text: ReadonlyMap<string, string>;
}

/**
 * readKit, plus the text of every listed file not marked secret (secret ones stay unread: their
 * presence is all the audit learns of them). A listed file that is missing is a broken kit.
 */
export async function readKitContents(dir: string, shown: string = dir): Promise<KitContents> {
  const summary = await readKit(dir, shown);
  const text = new Map<string, string>();
  for (const f of summary.files) {
    const at = `${shown}/${f.path}`;
    // provenance.json is input like any other: it may not send ferry outside the kit.
    if (f.path.startsWith('/') || f.path.split('/').includes('..'))
      throw inputError(
        `${KIT.provenance} lists ${f.path}, a path outside the kit`,
        { file: `${shown}/${KIT.provenance}`, field: 'files' },
        REGENERATE,
      );
    if (f.secret) continue;
    text.set(
      f.path,
      await readTextFile(join(dir, f.path), { shown: at, what: 'the kit file', provide: REGENERATE }),
    );
  }
  return { summary, text };
}
