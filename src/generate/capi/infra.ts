/**
 * What an infrastructure provider contributes to the Cluster API manifests: its cluster object(s)
 * and a machine template per role/pool. One implementation per infrastructure (proxmox.ts,
 * vsphere.ts); objects.ts refers to them only through this.
 */
import type { ObjectMeta } from './objects.js';

export interface MachineSize {
  cores: number;
  memoryMiB: number;
  diskGb: number;
}

export type InfraKind = 'proxmox' | 'vsphere';

export interface InfraObjects {
  kind: InfraKind;
  /** apiVersion of the cluster and machine-template objects. */
  apiVersion: string;
  clusterKind: string;
  templateKind: string;
  endpoint: { host: string; port: number };
  /** Objects created before the machine templates: the infrastructure cluster and what it references. */
  clusterObjects(meta: (name: string) => ObjectMeta): Record<string, unknown>[];
  machineTemplate(meta: ObjectMeta, size: MachineSize): Record<string, unknown>;
}
