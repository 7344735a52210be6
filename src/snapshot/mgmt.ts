/**
 * The `mgmt` part of a snapshot: a Cluster API management cluster as plain data (model.ts
 * MgmtSnapshot), built from objects read live (mgmt-collect.ts) or from the files of a snapshot
 * directory's `mgmt/` (docs/snapshot-layout.md). Secrets keep their metadata, type and data keys;
 * every value is dropped here, before anything is stored: a snapshot never holds key material.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inputError } from '../errors.js';
import { controllerSummary, isDeployment } from './mgmt-controllers.js';
import type {
  KubeObject,
  MgmtController,
  MgmtControllers,
  MgmtCrd,
  MgmtSnapshot,
  SourceRef,
} from './model.js';
import { parseYamlDocuments } from './yaml.js';

const CRD_KIND = 'CustomResourceDefinition';
/** The API groups ferry reads: core Cluster API and its providers (capi.md §2–§7). */
export const CAPI_GROUP_SUFFIX = 'cluster.x-k8s.io';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A Cluster API group: cluster.x-k8s.io itself or one of its provider groups. */
export function isCapiGroup(group: string): boolean {
  return group === CAPI_GROUP_SUFFIX || group.endsWith(`.${CAPI_GROUP_SUFFIX}`);
}

/** The object without managedFields and, for Secrets, without any data value (keys stay). */
export function redact(o: KubeObject): KubeObject {
  const { managedFields: _m, ...metadata } = o.metadata as KubeObject['metadata'] & {
    managedFields?: unknown;
  };
  const out: KubeObject = { ...o, metadata };
  if (o.kind === 'Secret') {
    const keys = [
      ...Object.keys(isRecord(o['data']) ? o['data'] : {}),
      ...Object.keys(isRecord(o['stringData']) ? o['stringData'] : {}),
    ];
    delete out['stringData'];
    out['data'] = Object.fromEntries(keys.map((k) => [k, '']));
    // kubectl's last-applied annotation repeats the data.
    if (metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] !== undefined) {
      const { 'kubectl.kubernetes.io/last-applied-configuration': _a, ...rest } = metadata.annotations;
      out.metadata = { ...metadata, annotations: rest };
    }
  }
  return out;
}

export function crdSummary(crd: Record<string, unknown>): MgmtCrd | undefined {
  const spec = isRecord(crd['spec']) ? crd['spec'] : undefined;
  const meta = isRecord(crd['metadata']) ? crd['metadata'] : undefined;
  const names = spec && isRecord(spec['names']) ? spec['names'] : undefined;
  if (!spec || !meta || typeof spec['group'] !== 'string' || !names || typeof names['kind'] !== 'string')
    return undefined;
  const versions = (Array.isArray(spec['versions']) ? spec['versions'] : []).filter(isRecord).map((v) => ({
    name: String(v['name']),
    served: v['served'] === true,
    storage: v['storage'] === true,
  }));
  return { name: String(meta['name']), group: spec['group'], kind: names['kind'], versions };
}

/**
 * Objects as read: CRDs of Cluster API groups become MgmtCrds, Deployments become the controllers
 * they are (others dropped), everything else is kept (redacted). `controllers` is what a live
 * read found (its Deployment list, or why there is none); from files, Deployments among the items
 * are the answer, and none at all means the controllers were not read.
 */
export function mgmtSnapshot(
  items: KubeObject[],
  source: SourceRef,
  controllers?: MgmtControllers,
): MgmtSnapshot {
  const objects: KubeObject[] = [];
  const crds: MgmtCrd[] = [];
  const deployments: MgmtController[] = [];
  let sawDeployment = false;
  for (const o of items) {
    if (o.kind === CRD_KIND) {
      const c = crdSummary(o as unknown as Record<string, unknown>);
      if (c && isCapiGroup(c.group)) crds.push(c);
    } else if (isDeployment(o)) {
      sawDeployment = true;
      const c = controllerSummary(o);
      if (c) deployments.push(c);
    } else objects.push(redact(o));
  }
  const found: MgmtControllers | undefined =
    controllers ?? (sawDeployment ? { kind: 'observed', deployments } : undefined);
  return { source, objects, crds, ...(found && { controllers: found }) };
}

/** A snapshot directory's `mgmt/`: every *.yaml, *.yml and *.json file, multi-document, `List`s expanded. */
export async function loadMgmtDir(dir: string): Promise<MgmtSnapshot> {
  const files = (await readdir(dir)).filter((f) => /\.(ya?ml|json)$/.test(f)).sort();
  const items: KubeObject[] = [];
  for (const f of files) {
    const file = join(dir, f);
    for (const doc of parseYamlDocuments(await readFile(file, 'utf8'), { file })) {
      const values =
        isRecord(doc.value) && Array.isArray(doc.value['items']) && String(doc.value['kind']).endsWith('List')
          ? doc.value['items']
          : [doc.value];
      for (const v of values) items.push(checkObject(v, file, doc.line));
    }
  }
  return mgmtSnapshot(items, { kind: 'file', path: dir });
}

function checkObject(v: unknown, file: string, line: number): KubeObject {
  const meta = isRecord(v) && isRecord(v['metadata']) ? v['metadata'] : undefined;
  if (
    !isRecord(v) ||
    typeof v['kind'] !== 'string' ||
    typeof v['apiVersion'] !== 'string' ||
    !meta ||
    typeof meta['name'] !== 'string'
  )
    throw inputError(
      'not a Kubernetes object: apiVersion, kind and metadata.name are required',
      { file, line },
      'mgmt/ holds objects of the management cluster as `kubectl get … -o yaml` prints them (docs/snapshot-layout.md)',
    );
  return v as unknown as KubeObject;
}

/** A saved snapshot's mgmt.json. */
export function validateMgmtSnapshot(v: unknown, file: string): void {
  const ok =
    isRecord(v) &&
    isRecord(v['source']) &&
    Array.isArray(v['objects']) &&
    Array.isArray(v['crds']) &&
    v['objects'].every((o) => isRecord(o) && typeof o['kind'] === 'string' && isRecord(o['metadata'])) &&
    (v['controllers'] === undefined || validControllers(v['controllers']));
  if (!ok)
    throw inputError(
      'mgmt.json is not a management-cluster snapshot (source, objects[], crds[], controllers)',
      { file },
      'take the snapshot again with `ferry snapshot --mgmt-kubeconfig K`',
    );
}

function validControllers(v: unknown): boolean {
  if (!isRecord(v)) return false;
  switch (v['kind']) {
    case 'observed':
      return (
        Array.isArray(v['deployments']) &&
        v['deployments'].every(
          (d) =>
            isRecord(d) &&
            typeof d['name'] === 'string' &&
            typeof d['component'] === 'string' &&
            typeof d['replicas'] === 'number' &&
            (d['leaderElection'] === 'on' || d['leaderElection'] === 'off') &&
            (d['spread'] === 'hostname' || d['spread'] === 'none'),
        )
      );
    case 'not-observed':
      return (
        typeof v['message'] === 'string' && (v['reason'] === 'forbidden' || v['reason'] === 'not-served')
      );
    default:
      return false;
  }
}
