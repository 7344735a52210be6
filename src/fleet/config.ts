/**
 * `fleet.yaml`: the clusters one `ferry fleet` command looks at, each read from a live kubeconfig
 * or from a snapshot directory, with the labels a platform team sorts them by (environment, wave,
 * owner), and the management clusters whose Cluster API Clusters join them (discovered when a
 * command runs: app/fleet-discover.ts). Every field is checked here, once; a bad entry names the
 * file, the line and the field.
 */
import { dirname, resolve } from 'node:path';
import { walkConfigDocument } from '../snapshot/yaml-walk.js';
import { readTextFile } from '../util/input-file.js';
import type { Walk } from '../util/walk.js';

export const FLEET_API_VERSION = 'ferry.dev/v1alpha1';
export const FLEET_KIND = 'Fleet';

export type ClusterSource =
  /** A saved snapshot or a files directory (docs/snapshot-layout.md). */
  | { kind: 'snapshot'; dir: string; shown: string }
  /** A live cluster: collected as `ferry snapshot --kubeconfig` does. */
  | { kind: 'kubeconfig'; path: string; shown: string; context?: string }
  /** A Cluster API Cluster found on a management cluster: read through its `<name>-kubeconfig` Secret. */
  | { kind: 'capi'; management: FleetManagement; namespace: string; cluster: string }
  /** A management cluster whose Clusters could not be listed: not observed, never an empty list. */
  | { kind: 'unlisted'; management: FleetManagement; reason: string };

/** A management cluster whose Cluster API Clusters are members of the fleet. */
export interface FleetManagement {
  /** Names the entry in the report when its Clusters cannot be listed. */
  name: string;
  kubeconfig: { path: string; shown: string; context?: string };
  /** Only the Clusters of this namespace; every namespace when unset. */
  namespace?: string;
  /** A label selector the Clusters must match, e.g. "environment=prod". */
  selector?: string;
  /** Labels every discovered cluster gets; its own Cluster labels win. */
  labels: Record<string, string>;
  /** Where `ferry mgmt backup` writes this management cluster's backups: `fleet status` reports their age. */
  backup?: FleetBackup;
}

/** A backup location as `ferry mgmt backup --to` takes it; credentials from a file or the environment, never inline. */
export interface FleetBackup {
  url: string;
  endpoint?: string;
  region?: string;
  credentialsFile?: string;
  profile?: string;
  /** The age recipients the scheduled backup encrypts to (`ferry fleet schedule`). */
  recipientsFile?: string;
}

export interface FleetCluster {
  name: string;
  source: ClusterSource;
  labels: Record<string, string>;
}

export interface Fleet {
  file: string;
  /** The clusters listed in the file; discovery adds the management clusters' (app/fleet-discover.ts). */
  clusters: FleetCluster[];
  management: FleetManagement[];
}

/** A cluster name is a directory name in the fleet's output: a DNS label keeps it portable. */
const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** Kubernetes' label-value syntax, so labels select as cluster labels do. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
/** What a label selector may hold (the API server parses it): no spaces, quotes or shell characters. */
const SELECTOR = /^[A-Za-z0-9_./=!,() -]+$/;
/** As `ferry mgmt backup --to` takes it (mgmt/s3-config.ts parseS3Url). */
const S3_URL = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/;
const ENDPOINT = /^https?:\/\/[^/\s]+\/?$/;
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
    allowed: ['clusters', 'management'],
  });
  const management = parseManagement(w.at('management'), baseDir);
  const items =
    management.length > 0 && w.at('clusters').absent
      ? []
      : w.at('clusters').items({
          min: 1,
          hint: 'list the clusters under clusters:, each with a name and a snapshot or a kubeconfig, or a management cluster to discover them from under management:',
        });
  const clusters: FleetCluster[] = [];
  const seen = new Map<string, number>();
  for (const m of management) seen.set(m.name, -1);
  for (const [i, c] of items.entries()) {
    c.object({ allowed: ['name', 'snapshot', 'kubeconfig', 'context', 'labels'] });
    const name = c
      .at('name')
      .string({ nonBlank: true, pattern: NAME, hint: 'a lowercase DNS label, e.g. prod-eu-1' });
    const before = seen.get(name);
    if (before !== undefined)
      c.at('name').invalid(
        before < 0
          ? `cluster name "${name}" is also a management entry's name`
          : `cluster name "${name}" is used twice (clusters[${before}] and clusters[${i}])`,
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
    const labels = parseLabels(c.at('labels'));
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
  return { file, clusters, management };
}

function parseLabels(at: Walk): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [key, v] of at.given()?.entries() ?? []) {
    if (!LABEL_KEY.test(key))
      v.invalid(`label key "${key}" is not a valid label key`, 'use a key such as wave or example.com/owner');
    labels[key] = v.string({
      pattern: LABEL_VALUE,
      hint: 'a label value: letters, digits, - _ . (quote numbers: wave: "1")',
    });
  }
  return labels;
}

function parseManagement(at: Walk, baseDir: string): FleetManagement[] {
  const out: FleetManagement[] = [];
  const seen = new Map<string, number>();
  for (const [i, m] of (at.given()?.items({ min: 1 }) ?? []).entries()) {
    m.object({ allowed: ['name', 'kubeconfig', 'context', 'namespace', 'selector', 'labels', 'backup'] });
    const name = m
      .at('name')
      .string({ nonBlank: true, pattern: NAME, hint: 'a lowercase DNS label, e.g. mgmt-eu' });
    const before = seen.get(name);
    if (before !== undefined)
      m.at('name').invalid(
        `management name "${name}" is used twice (management[${before}] and management[${i}])`,
        'give each management cluster its own name',
      );
    seen.set(name, i);
    const kube = m.at('kubeconfig').string({
      nonBlank: true,
      hint: "the management cluster's kubeconfig, relative to this file",
    });
    const context = m.at('context').given()?.string({ nonBlank: true });
    const namespace = m
      .at('namespace')
      .given()
      ?.string({ nonBlank: true, pattern: NAME, hint: 'a namespace name, e.g. fleet' });
    const selector = m.at('selector').given()?.string({
      nonBlank: true,
      pattern: SELECTOR,
      hint: 'a label selector, e.g. environment=prod,wave!=0',
    });
    out.push({
      name,
      kubeconfig: { path: resolve(baseDir, kube), shown: kube, ...(context !== undefined && { context }) },
      ...(namespace !== undefined && { namespace }),
      ...(selector !== undefined && { selector }),
      labels: parseLabels(m.at('labels')),
    });
    const backup = parseBackup(m.at('backup'), baseDir);
    if (backup) out.at(-1)!.backup = backup;
  }
  return out;
}

function parseBackup(at: Walk, baseDir: string): FleetBackup | undefined {
  const b = at.given();
  if (!b) return undefined;
  b.object({ allowed: ['url', 'endpoint', 'region', 'credentialsFile', 'profile', 'recipientsFile'] });
  const url = b.at('url').string({
    nonBlank: true,
    pattern: S3_URL,
    hint: 'the s3://BUCKET[/PREFIX] given to ferry mgmt backup --to',
  });
  const endpoint = b.at('endpoint').given()?.string({
    nonBlank: true,
    pattern: ENDPOINT,
    hint: 'http(s)://HOST[:PORT], e.g. https://s3.eu.example',
  });
  const region = b.at('region').given()?.string({ nonBlank: true });
  const file = b
    .at('credentialsFile')
    .given()
    ?.string({ nonBlank: true, hint: 'an AWS shared credentials file (0600), relative to this file' });
  const profile = b.at('profile').given()?.string({ nonBlank: true });
  const recipients = b
    .at('recipientsFile')
    .given()
    ?.string({ nonBlank: true, hint: 'a file of age recipients (age1…), relative to this file' });
  return {
    url,
    ...(endpoint !== undefined && { endpoint }),
    ...(region !== undefined && { region }),
    ...(file !== undefined && { credentialsFile: resolve(baseDir, file) }),
    ...(profile !== undefined && { profile }),
    ...(recipients !== undefined && { recipientsFile: resolve(baseDir, recipients) }),
  };
}
