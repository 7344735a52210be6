/**
 * The vocabulary of management-cluster backups: the kinds ferry exports, why each object is in a
 * backup, and the archive (manifest + objects) that is packed, encrypted and stored in S3.
 */

import { objectName } from '../capi/view.js';
import type { KubeObject } from '../snapshot/model.js';

export type { KubeObject };

/** A served custom resource kind, as discovery found it on a cluster. */
export interface KindInfo {
  /** CRD name, e.g. clusters.cluster.x-k8s.io. */
  crd: string;
  group: string;
  kind: string;
  plural: string;
  scope: 'Namespaced' | 'Cluster';
  /** The storage version: the one clusterctl move reads (capi.md §5.1). */
  storageVersion: string;
  /** Versions the API server serves. */
  served: string[];
  statusSubresource: boolean;
}

/**
 * Why an object is in the backup. The first five are what `clusterctl move` carries (capi.md §5.1);
 * `cluster-label` (the `cluster.x-k8s.io/cluster-name` label of a Cluster in its namespace) and
 * `reference` (named by a carried object's controlPlaneRef, infrastructureRef or templates) reach
 * what no owner reference does yet, right after adoption or with the controllers down (graph.ts);
 * `talos-secret` is what move drops and ferry needs back (H14); `inventory` is clusterctl's provider
 * inventory, recorded to check the target, never re-created; `clusterctl-move` is an object only
 * `clusterctl move --to-directory` wrote (`--via clusterctl`), not ferry's own export.
 */
export type Reason =
  | 'root'
  | 'owner-chain'
  | 'soft-owned-secret'
  | 'move-label'
  | 'cluster-label'
  | 'reference'
  | 'talos-secret'
  | 'inventory'
  | 'clusterctl-move';

export interface ObjectEntry {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid: string;
  reason: Reason;
  /** sha256 of the object's canonical JSON as archived. */
  sha256: string;
}

export interface ProviderEntry {
  namespace: string;
  name: string;
  providerName: string;
  type: string;
  version: string;
}

export const ARCHIVE_FORMAT = 'ferry.dev/mgmt-backup/v1';

export interface Manifest {
  format: typeof ARCHIVE_FORMAT;
  createdAt: string;
  ferryVersion: string;
  source: { server: string };
  kinds: KindInfo[];
  providers: ProviderEntry[];
  namespaces: string[];
  clusters: { namespace: string; name: string }[];
  counts: Record<string, number>;
  objects: ObjectEntry[];
  /** CAPI objects not carried because nothing leads to them from a Cluster (capi#8387): said, not silent. */
  leftBehind: string[];
}

export interface Archive {
  manifest: Manifest;
  objects: KubeObject[];
}

export function describeObject(o: KubeObject): string {
  return objectName({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name });
}
