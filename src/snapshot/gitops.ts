/**
 * What a snapshot keeps of a GitOps object (an Argo CD Application, a Flux Kustomization or
 * HelmRelease): who it is, whether it reconciles, and what it says it owns. Helm values,
 * parameters, plugin environments and post-build substitutions are dropped as the object arrives:
 * they may hold credentials, and nothing ferry decides depends on them.
 */
import { GITOPS_GROUPS } from '../knowledge/gitops.js';
import type { KubeObject } from './model.js';
import { isRecord } from './validate.js';

/** The GitOps kind of an object, by its API group; undefined for anything else (kustomize's own Kustomization included). */
export function gitopsKind(obj: Pick<KubeObject, 'apiVersion' | 'kind'>): string | undefined {
  const group = obj.apiVersion.includes('/') ? obj.apiVersion.slice(0, obj.apiVersion.indexOf('/')) : '';
  const kind = GITOPS_GROUPS[group];
  return kind === obj.kind ? kind : undefined;
}

const pick = (o: unknown, keys: readonly string[]): Record<string, unknown> | undefined => {
  if (!isRecord(o)) return undefined;
  const out: Record<string, unknown> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return Object.keys(out).length > 0 ? out : undefined;
};

const SOURCE_KEYS = ['repoURL', 'path', 'chart', 'targetRevision'] as const;

/** An Argo CD Application source without its Helm values, parameters or plugin environment. */
const argoSource = (s: unknown) => pick(s, SOURCE_KEYS);

function argoSummary(o: KubeObject): KubeObject {
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  const out: KubeObject = { apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata, spec: {} };
  const sync = pick(spec.syncPolicy, ['automated']);
  if (sync) out.spec.syncPolicy = sync;
  if (spec.source !== undefined) out.spec.source = argoSource(spec.source);
  if (Array.isArray(spec.sources)) out.spec.sources = spec.sources.map(argoSource);
  const dest = pick(spec.destination, ['server', 'name', 'namespace']);
  if (dest) out.spec.destination = dest;
  if (Array.isArray(status.resources)) {
    out.status = {
      resources: status.resources
        .map((r: unknown) => pick(r, ['group', 'kind', 'namespace', 'name']))
        .filter((r: unknown) => r !== undefined),
    };
  }
  return out;
}

function fluxSummary(o: KubeObject): KubeObject {
  const spec = o.spec ?? {};
  const out: KubeObject = {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: o.metadata,
    spec: pick(spec, ['suspend', 'interval', 'path', 'targetNamespace', 'releaseName', 'sourceRef']) ?? {},
  };
  const drift = pick(spec.driftDetection, ['mode']);
  if (drift) out.spec.driftDetection = drift;
  const chart = pick(spec.chart?.spec, ['chart', 'version', 'sourceRef']);
  if (chart) out.spec.chart = { spec: chart };
  const entries = o.status?.inventory?.entries;
  if (Array.isArray(entries)) {
    out.status = {
      inventory: {
        entries: entries.map((e: unknown) => pick(e, ['id'])).filter((e: unknown) => e !== undefined),
      },
    };
  }
  return out;
}

/** The object as a snapshot keeps it; anything that is not a GitOps object is returned unchanged. */
export function gitopsSummary(o: KubeObject): KubeObject {
  switch (gitopsKind(o)) {
    case 'Application':
      return argoSummary(o);
    case 'Kustomization':
    case 'HelmRelease':
      return fluxSummary(o);
    default:
      return o;
  }
}
