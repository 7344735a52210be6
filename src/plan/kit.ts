/**
 * Reads what the plan needs from a kit written by `ferry generate`: its provenance.json (which
 * files exist, for which snapshot and target), kubeadm/steps.json (the kubeadm-side preparation)
 * and the probe ServiceAccount's name. Never reads a file marked secret. The adapter side of the
 * plan: buildPlan takes the KitSummary as plain data.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { inputError } from '../errors.js';
import { type KitPrepStep, STEPS_JSON_KIND } from '../generate/kubeadm-prep/step.js';

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
}

const REGENERATE = 'point --kit at a directory written by `ferry generate`, or generate it again';

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

async function readJson(dir: string, rel: string, shown: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(join(dir, rel), 'utf8');
  } catch (cause) {
    throw inputError(`the kit has no readable ${rel}`, { file: `${shown}/${rel}` }, REGENERATE, cause);
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw inputError(`${rel} is not valid JSON`, { file: `${shown}/${rel}` }, REGENERATE, cause);
  }
}

export async function readKit(dir: string, shown: string = dir): Promise<KitSummary> {
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
  };
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
  let text: string;
  try {
    text = await readFile(join(dir, 'rbac/health-probe.yaml'), 'utf8');
  } catch (cause) {
    throw inputError(
      'the kit lists rbac/health-probe.yaml but it cannot be read',
      { file: `${shown}/rbac/health-probe.yaml` },
      REGENERATE,
      cause,
    );
  }
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
