/**
 * The names a capi kit gave its Cluster API objects (capi/cluster.yaml, never the secrets file):
 * the namespace, the Cluster, the TalosControlPlane, and per MachineDeployment the kubeadm workers
 * it replaces (`ferry.dev/replaces`). `ferry plan --kit` writes them into the runbook's kubectl
 * commands; `ferry run --provisioner capi` scales these objects and nothing else.
 */
import { join } from 'node:path';
import { inputError } from '../errors.js';
import { REPLACES_ANNOTATION } from '../generate/capi/objects.js';
import { KIT } from '../knowledge/kit-paths.js';
import { parseYamlDocuments } from '../snapshot/yaml.js';
import { readTextFile } from '../util/input-file.js';

export interface CapiNames {
  namespace: string;
  cluster: string;
  controlPlane: string;
  machineDeployments: { name: string; replaces: string[] }[];
}

const REGENERATE = 'generate the kit again with `ferry generate --provisioner capi`';

interface Obj {
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown; annotations?: Record<string, unknown> };
}

/** The names from the documents of capi/cluster.yaml; `file` as shown in errors. */
export function capiNamesOf(docs: { value: unknown; line: number }[], file: string): CapiNames {
  const objs = docs.map((d) => ({ o: (d.value ?? {}) as Obj, line: d.line }));
  const one = (kind: string) => {
    const hit = objs.find((x) => x.o.kind === kind);
    if (!hit || typeof hit.o.metadata?.name !== 'string')
      throw inputError(`${KIT.capiCluster} has no ${kind} with a metadata.name`, { file }, REGENERATE);
    return hit.o;
  };
  const cluster = one('Cluster');
  const tcp = one('TalosControlPlane');
  const ns = typeof cluster.metadata?.namespace === 'string' ? cluster.metadata.namespace : 'default';
  return {
    namespace: ns,
    cluster: cluster.metadata!.name as string,
    controlPlane: tcp.metadata!.name as string,
    machineDeployments: objs
      .filter((x) => x.o.kind === 'MachineDeployment')
      .map(({ o, line }) => {
        const name = o.metadata?.name;
        if (typeof name !== 'string')
          throw inputError('a MachineDeployment has no metadata.name', { file, line }, REGENERATE);
        const r = o.metadata?.annotations?.[REPLACES_ANNOTATION];
        return {
          name,
          replaces:
            typeof r === 'string'
              ? r
                  .split(',')
                  .map((s) => s.trim())
                  .filter(Boolean)
              : [],
        };
      }),
  };
}

export async function readCapiNames(dir: string, shown: string): Promise<CapiNames> {
  const file = `${shown}/${KIT.capiCluster}`;
  const text = await readTextFile(join(dir, KIT.capiCluster), {
    shown: file,
    what: 'the kit file',
    provide: REGENERATE,
  });
  return capiNamesOf(parseYamlDocuments(text, { file }), file);
}
