import { inputError } from '../errors.js';
import { parseYamlDocuments } from '../snapshot/yaml.js';
import { readTextFile } from '../util/input-file.js';

/** Reads `helm get values cilium -o yaml` output: the release's current values, merged under ferry's. */
export async function readCiliumValues(
  file: string,
  shown: string = file,
): Promise<{ file: string; values: Record<string, unknown> }> {
  const text = await readTextFile(file, {
    shown,
    flag: '--cilium-values',
    provide: 'pass the output of `helm -n kube-system get values cilium -o yaml` saved to a file',
  });
  const docs = parseYamlDocuments(text, { file });
  const first = docs[0]?.value ?? {};
  if (first === null || typeof first !== 'object' || Array.isArray(first))
    throw inputError(
      'Cilium values must be a YAML mapping',
      { file, line: docs[0]?.line ?? 1 },
      'pass the output of `helm -n kube-system get values cilium -o yaml`',
    );
  return { file, values: first as Record<string, unknown> };
}
