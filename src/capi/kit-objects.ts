/**
 * The Cluster API objects of a capi kit, as `ferry capi adopt` sends them: capi/secrets.yaml (the
 * PKI Secrets, read but never printed) and capi/cluster.yaml. A kit made for another provisioner,
 * or one whose files are missing or are not Kubernetes objects, is bad input (exit 2).
 */
import { join } from 'node:path';
import { inputError } from '../errors.js';
import { readKit } from '../kit/read.js';
import { KIT } from '../knowledge/kit-paths.js';
import type { KubeObject } from '../snapshot/model.js';
import { parseYamlDocuments } from '../snapshot/yaml.js';
import { readTextFile } from '../util/input-file.js';

export interface CapiKit {
  /** The kit directory as given. */
  dir: string;
  objects: KubeObject[];
  namespace: string;
  cluster: string;
}

const REGENERATE = 'generate the kit again with `ferry generate --provisioner capi`';

export async function readCapiKit(dir: string, shown: string = dir): Promise<CapiKit> {
  const summary = await readKit(dir, shown);
  if (summary.target.provisioner !== 'capi')
    throw inputError(
      `the kit ${shown} was generated for provisioner ${summary.target.provisioner ?? '(none)'}, not capi`,
      { file: `${shown}/${KIT.provenance}`, field: 'target.provisioner' },
      REGENERATE,
    );
  const objects: KubeObject[] = [];
  for (const rel of [KIT.capiSecrets, KIT.capiCluster]) {
    const file = `${shown}/${rel}`;
    if (!summary.files.some((f) => f.path === rel))
      throw inputError(
        `the kit does not list ${rel}`,
        { file: `${shown}/${KIT.provenance}`, field: 'files' },
        REGENERATE,
      );
    const text = await readTextFile(join(dir, rel), {
      shown: file,
      what: 'the kit file',
      provide: REGENERATE,
    });
    for (const doc of parseYamlDocuments(text, { file })) {
      const o = doc.value as Partial<KubeObject> | null;
      if (
        typeof o !== 'object' ||
        o === null ||
        typeof o.apiVersion !== 'string' ||
        typeof o.kind !== 'string' ||
        typeof o.metadata?.name !== 'string'
      )
        throw inputError(
          'a document is not a Kubernetes object (apiVersion, kind, metadata.name)',
          { file, line: doc.line },
          REGENERATE,
        );
      objects.push(o as KubeObject);
    }
  }
  const cluster = objects.find((o) => o.kind === 'Cluster');
  if (!cluster || !objects.some((o) => o.kind === 'TalosControlPlane'))
    throw inputError(
      `${KIT.capiCluster} has no Cluster or no TalosControlPlane`,
      { file: `${shown}/${KIT.capiCluster}` },
      REGENERATE,
    );
  return {
    dir: shown,
    objects,
    namespace: cluster.metadata.namespace ?? 'default',
    cluster: cluster.metadata.name,
  };
}
