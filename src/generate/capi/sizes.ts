/**
 * VM sizes for the Proxmox machine templates: the largest kubeadm node of the role (Node
 * status.capacity), so a replacement is never smaller than what it replaces; flags override.
 */
import type { KubeObject, SourceRef } from '../../snapshot/model.js';
import type { VmSize } from './options.js';

export interface DerivedSize {
  cores: number;
  memoryMiB: number;
  diskGb: number;
  sources: SourceRef[];
  /** Which fields came from flags. */
  fromFlags: (keyof VmSize)[];
}

/** Kubernetes quantity → bytes (the binary and decimal suffixes kubelets report). */
export function quantityBytes(q: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$/.exec(q.trim());
  if (!m) return undefined;
  const mult: Record<string, number> = {
    '': 1,
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
    Ti: 1024 ** 4,
    Pi: 1024 ** 5,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    P: 1e15,
  };
  return Number(m[1]) * (mult[m[2] ?? ''] ?? 1);
}

/** Size for a role from its nodes and the flags; undefined fields could not be derived. */
export function roleSize(
  nodes: KubeObject[],
  flags: VmSize = {},
): Partial<DerivedSize> & { sources: SourceRef[]; fromFlags: (keyof VmSize)[] } {
  let cores = 0;
  let memory = 0;
  let disk = 0;
  const sources: SourceRef[] = [];
  for (const n of nodes) {
    const cap = (n.status?.capacity ?? {}) as Record<string, unknown>;
    const cpu = Number(cap['cpu']);
    const mem = typeof cap['memory'] === 'string' ? quantityBytes(cap['memory']) : undefined;
    const eph =
      typeof cap['ephemeral-storage'] === 'string' ? quantityBytes(cap['ephemeral-storage']) : undefined;
    if (Number.isFinite(cpu) || mem || eph)
      sources.push({ kind: 'object', objectKind: 'Node', name: n.metadata.name, field: 'status.capacity' });
    if (Number.isFinite(cpu)) cores = Math.max(cores, Math.ceil(cpu));
    if (mem) memory = Math.max(memory, mem);
    if (eph) disk = Math.max(disk, eph);
  }
  const out: Partial<DerivedSize> & { sources: SourceRef[]; fromFlags: (keyof VmSize)[] } = {
    sources,
    fromFlags: [],
  };
  if (cores > 0) out.cores = cores;
  // CAPMOX wants memory in MiB, a multiple of 8 (capi.md §7).
  if (memory > 0) out.memoryMiB = Math.ceil(memory / 1024 ** 2 / 8) * 8;
  // The kubelet's filesystem lives on the boot disk; Talos needs at least as much.
  if (disk > 0) out.diskGb = Math.max(10, Math.ceil(disk / 1024 ** 3));
  for (const k of ['cores', 'memoryMiB', 'diskGb'] as const) {
    const v = flags[k];
    if (v === undefined) continue;
    out[k] = v;
    out.fromFlags.push(k);
  }
  return out;
}
