/**
 * A cluster's Kubernetes and Talos versions as its Nodes report them (status.nodeInfo): the
 * kubelet version of each node and, on Talos, the OS version its osImage names. Pure.
 */
import type { KubeObject } from '../snapshot/model.js';

export interface VersionCount {
  version: string;
  nodes: number;
}

export type ClusterVersions =
  | { kind: 'observed'; nodes: number; kubernetes: VersionCount[]; talos: VersionCount[]; notTalos: number }
  /** The cluster could not be read: its versions are not known, never "none". */
  | { kind: 'not-observed'; reason: string };

/** Talos sets osImage to "Talos (v1.9.5)". */
const TALOS_IMAGE = /^Talos \((v\d+\.\d+\.\d+[^)]*)\)$/;

function counted(values: string[]): VersionCount[] {
  const by = new Map<string, number>();
  for (const v of values) by.set(v, (by.get(v) ?? 0) + 1);
  return [...by]
    .map(([version, nodes]) => ({ version, nodes }))
    .sort((a, b) => a.version.localeCompare(b.version, 'en', { numeric: true }));
}

export function clusterVersions(nodes: readonly KubeObject[]): ClusterVersions {
  const info = nodes.map((n) => (n.status as { nodeInfo?: Record<string, unknown> } | undefined)?.nodeInfo);
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : 'unknown');
  const talos = info.flatMap((i) => {
    const m = TALOS_IMAGE.exec(typeof i?.['osImage'] === 'string' ? i['osImage'] : '');
    return m ? [m[1]!] : [];
  });
  return {
    kind: 'observed',
    nodes: nodes.length,
    kubernetes: counted(info.map((i) => text(i?.['kubeletVersion']))),
    talos: counted(talos),
    notTalos: nodes.length - talos.length,
  };
}

export function describeVersions(v: ClusterVersions): string {
  if (v.kind === 'not-observed') return `versions not observed: ${v.reason}`;
  if (v.nodes === 0) return 'no nodes';
  const list = (c: VersionCount[]) =>
    c.length === 1 ? c[0]!.version : c.map((x) => `${x.version} (${x.nodes})`).join(', ');
  const kube = `kubernetes ${list(v.kubernetes)}`;
  if (v.talos.length === 0) return `${kube}; no Talos node (${v.nodes} nodes)`;
  return `${kube}; talos ${list(v.talos)} on ${v.nodes - v.notTalos}/${v.nodes} nodes`;
}
