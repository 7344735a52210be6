/**
 * `ferry upgrade plan --manifests DIR`: every Kubernetes object in the YAML and JSON files under
 * DIR (recursively, in name order), each with the file it came from, for the removed-API scan.
 * A document that is not an object with apiVersion and kind (a Helm values file, a kustomization's
 * patch) is skipped, not an error; a file that does not parse is.
 */
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { KubeObject } from '../snapshot/model.js';
import { parseDocumentsByExtension } from '../snapshot/yaml.js';
import type { ManifestObject } from '../upgrade/model.js';
import { readTextFile, requireDirectory } from '../util/input-file.js';

const MANIFEST = /\.(ya?ml|json)$/i;

async function filesUnder(dir: string): Promise<string[]> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const out: string[] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile() && MANIFEST.test(e.name)) out.push(p);
  }
  return out;
}

const isObject = (v: unknown): v is KubeObject =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as KubeObject).apiVersion === 'string' &&
  typeof (v as KubeObject).kind === 'string';

export async function readManifests(dir: string, shown: string): Promise<ManifestObject[]> {
  await requireDirectory(dir, {
    flag: '--manifests',
    shown,
    provide: 'pass --manifests a directory of YAML or JSON manifests',
  });
  const out: ManifestObject[] = [];
  for (const file of await filesUnder(dir)) {
    const rel = join(shown, relative(dir, file));
    const text = await readTextFile(file, {
      flag: '--manifests',
      shown: rel,
      provide: 'make the file readable',
    });
    for (const doc of parseDocumentsByExtension(text, file, { file: rel })) {
      const items =
        isObject(doc.value) && doc.value.kind.endsWith('List') && Array.isArray(doc.value['items'])
          ? doc.value['items']
          : [doc.value];
      for (const v of items)
        if (isObject(v))
          out.push({ object: { ...v, metadata: v.metadata ?? { name: '(unnamed)' } }, file: rel });
    }
  }
  return out;
}
