/**
 * `fleet.yaml`: the clusters one `ferry fleet` command looks at, each read from a live kubeconfig
 * or from a snapshot directory, with the labels a platform team sorts them by (environment, wave,
 * owner). Every field is checked here, once; a bad entry names the file, the line and the field.
 */
import { dirname, resolve } from 'node:path';
import { walkConfigDocument } from '../snapshot/yaml-walk.js';
import { readTextFile } from '../util/input-file.js';

export const FLEET_API_VERSION = 'ferry.dev/v1alpha1';
export const FLEET_KIND = 'Fleet';

export type ClusterSource =
  /** A saved snapshot or a files directory (docs/snapshot-layout.md). */
  | { kind: 'snapshot'; dir: string; shown: string }
  /** A live cluster: collected as `ferry snapshot --kubeconfig` does. */
  | { kind: 'kubeconfig'; path: string; shown: string; context?: string };

export interface FleetCluster {
  name: string;
  source: ClusterSource;
  labels: Record<string, string>;
}

export interface Fleet {
  file: string;
  clusters: FleetCluster[];
}

/** A cluster name is a directory name in the fleet's output: a DNS label keeps it portable. */
const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** Kubernetes' label-value syntax, so labels select as cluster labels do. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

export async function loadFleet(path: string, shown: string): Promise<Fleet> {
  const text = await readTextFile(path, {
    shown,
    flag: 'FLEET',
    provide: 'pass the fleet.yaml that lists the clusters (see examples/fleet/fleet.yaml)',
  });
  return parseFleet(text, shown, dirname(resolve(path)));
}

/** Paths in the file are relative to the file's own directory, so a fleet can move with its snapshots. */
export function parseFleet(text: string, file: string, baseDir: string): Fleet {
  const w = walkConfigDocument(text, file, {
    apiVersion: FLEET_API_VERSION,
    kind: FLEET_KIND,
    example: 'examples/fleet/fleet.yaml',
    allowed: ['clusters'],
  });
  const items = w.at('clusters').items({
    min: 1,
    hint: 'list the clusters under clusters:, each with a name and a snapshot or a kubeconfig',
  });
  const clusters: FleetCluster[] = [];
  const seen = new Map<string, number>();
  for (const [i, c] of items.entries()) {
    c.object({ allowed: ['name', 'snapshot', 'kubeconfig', 'context', 'labels'] });
    const name = c
      .at('name')
      .string({ nonBlank: true, pattern: NAME, hint: 'a lowercase DNS label, e.g. prod-eu-1' });
    const before = seen.get(name);
    if (before !== undefined)
      c.at('name').invalid(
        `cluster name "${name}" is used twice (clusters[${before}] and clusters[${i}])`,
        'give each cluster its own name',
      );
    seen.set(name, i);
    const snap = c.at('snapshot').given()?.string({ nonBlank: true });
    const kube = c.at('kubeconfig').given()?.string({ nonBlank: true });
    const context = c.at('context').given()?.string({ nonBlank: true });
    if ((snap === undefined) === (kube === undefined))
      c.invalid(
        `cluster "${name}" needs exactly one of snapshot and kubeconfig`,
        'give a snapshot directory (offline) or a kubeconfig (live), not both',
      );
    if (snap !== undefined && context !== undefined)
      c.at('context').invalid(
        'context only goes with kubeconfig',
        'remove context, or read the cluster live with kubeconfig',
      );
    const labels: Record<string, string> = {};
    for (const [key, v] of c.at('labels').given()?.entries() ?? []) {
      if (!LABEL_KEY.test(key))
        v.invalid(
          `label key "${key}" is not a valid label key`,
          'use a key such as wave or example.com/owner',
        );
      labels[key] = v.string({
        pattern: LABEL_VALUE,
        hint: 'a label value: letters, digits, - _ . (quote numbers: wave: "1")',
      });
    }
    const source: ClusterSource =
      snap !== undefined
        ? { kind: 'snapshot', dir: resolve(baseDir, snap), shown: snap }
        : {
            kind: 'kubeconfig',
            path: resolve(baseDir, kube!),
            shown: kube!,
            ...(context !== undefined && { context }),
          };
    clusters.push({ name, source, labels });
  }
  return { file, clusters };
}
