/**
 * Writes the synthetic cluster as a saved snapshot (docs/snapshot-layout.md §2): the kubeadm
 * configuration, static pods, PKI inventory, etcd and encryption parts of examples/lab-cluster (so
 * every rule family has its inputs, not only the workload rules), and resources/KIND.json streamed
 * from the generator in the saved-snapshot layout (`[`, one object per line, `]`).
 */
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { loadSnapshot } from '../../src/snapshot/load.js';
import { emptyResources, RESOURCE_KEYS, type ResourceKey, type Snapshot } from '../../src/snapshot/model.js';
import { saveSnapshot } from '../../src/snapshot/store.js';
import { generateCluster, type SyntheticCounts, type SyntheticSize } from './synthetic-cluster.js';

/** Kinds the generator owns; the others (ConfigMaps, CSI drivers, PVs, RBAC) come from the example. */
const GENERATED: readonly ResourceKey[] = [
  'namespaces',
  'nodes',
  'pods',
  'deployments',
  'replicasets',
  'statefulsets',
  'daemonsets',
  'jobs',
  'cronjobs',
  'poddisruptionbudgets',
  'services',
];

export interface WrittenSnapshot {
  dir: string;
  counts: SyntheticCounts;
  /** Bytes of resources/*.json: "the resources dump". */
  dumpBytes: number;
  files: string[];
}

class LinesWriter {
  private fd: number;
  private buf = '[\n';
  private first = true;
  constructor(path: string) {
    this.fd = openSync(path, 'w', 0o600);
  }
  add(value: unknown): void {
    this.buf += this.first ? JSON.stringify(value) : `,\n${JSON.stringify(value)}`;
    this.first = false;
    if (this.buf.length > 1 << 20) this.flush();
  }
  close(): void {
    this.buf += this.first ? ']\n' : '\n]\n';
    this.flush();
    closeSync(this.fd);
  }
  private flush(): void {
    writeSync(this.fd, this.buf);
    this.buf = '';
  }
}

export async function writeSyntheticSnapshot(
  exampleDir: string,
  dir: string,
  size: SyntheticSize,
): Promise<WrittenSnapshot> {
  const example = await loadSnapshot(exampleDir, { strictPki: false });
  const resources = emptyResources();
  for (const key of RESOURCE_KEYS)
    if (!GENERATED.includes(key)) (resources[key] as unknown) = example.resources[key];
  resources.bootstrapTokens = example.resources.bootstrapTokens;
  const base: Snapshot = {
    ...example,
    manifest: {
      ...example.manifest,
      source: { kind: 'files', path: `synthetic ${size.nodes} nodes / ${size.pods} pods` },
      warnings: [],
    },
    resources,
  };
  await saveSnapshot(base, dir, { force: true });

  const writers = new Map<ResourceKey, LinesWriter>();
  for (const key of GENERATED) writers.set(key, new LinesWriter(join(dir, 'resources', `${key}.json`)));
  const counts = generateCluster(size, (key, obj) => writers.get(key)!.add(obj));
  for (const w of writers.values()) w.close();

  const files = [...RESOURCE_KEYS, 'bootstrapTokens'].map((k) => join(dir, 'resources', `${k}.json`));
  const dumpBytes = files.reduce((sum, f) => sum + statSync(f).size, 0);
  return { dir, counts, dumpBytes, files };
}
