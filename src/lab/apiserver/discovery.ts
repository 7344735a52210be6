/**
 * Discovery documents (/api, /apis, /apis/GROUP, /api/v1, /apis/GROUP/VERSION) built from the
 * resource table, the way kubectl and client libraries find resources. Pure.
 */
import { apiVersionOf, type ResourceDef } from './resources.js';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** Kubernetes version priority: GA before beta before alpha, higher numbers first. */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0, v];
    const level = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [level, -Number(m[1]), -Number(m[3] ?? 0), v];
  };
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return (ra[i] as number) - (rb[i] as number);
  return ra[3].localeCompare(rb[3]);
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

type GroupVersions = Map<string, string[]>;

function groupVersions(defs: ResourceDef[]): GroupVersions {
  const out: GroupVersions = new Map();
  for (const d of defs) {
    if (d.group === '') continue;
    const vs = out.get(d.group) ?? [];
    if (!vs.includes(d.version)) vs.push(d.version);
    out.set(d.group, vs);
  }
  for (const vs of out.values()) vs.sort(compareKubeVersions);
  return out;
}

function groupDoc(name: string, versions: string[]): Record<string, unknown> {
  const gv = (version: string) => ({ groupVersion: `${name}/${version}`, version });
  return { name, versions: versions.map(gv), preferredVersion: gv(versions[0]!) };
}

export function apiGroupList(defs: ResourceDef[]): Record<string, unknown> {
  const groups = [...groupVersions(defs)].map(([name, versions]) => groupDoc(name, versions));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

export function apiGroup(defs: ResourceDef[], group: string): Record<string, unknown> | undefined {
  const versions = groupVersions(defs).get(group);
  if (!versions) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(group, versions) };
}

function subresourceEntry(d: ResourceDef, s: ResourceDef['subresources'][number]): Record<string, unknown> {
  const base = { name: `${d.plural}/${s}`, singularName: '', namespaced: d.namespaced };
  switch (s) {
    case 'status':
      return { ...base, kind: d.kind, verbs: ['get', 'patch', 'update'] };
    case 'scale':
      return {
        ...base,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: ['get', 'patch', 'update'],
      };
    case 'eviction':
      return { ...base, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] };
    case 'binding':
      return { ...base, kind: 'Binding', verbs: ['create'] };
  }
}

function subresourceEntries(d: ResourceDef): Record<string, unknown>[] {
  return d.subresources.map((s) => subresourceEntry(d, s));
}

export function apiResourceList(
  defs: ResourceDef[],
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const rows = defs.filter((d) => d.group === group && d.version === version);
  if (rows.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: apiVersionOf({ group, version }),
    resources: [
      ...(group === ''
        ? [
            {
              name: 'bindings',
              singularName: 'binding',
              namespaced: true,
              kind: 'Binding',
              verbs: ['create'],
            },
          ]
        : []),
      ...rows.flatMap((d) => [
        {
          name: d.plural,
          singularName: d.singular,
          namespaced: d.namespaced,
          kind: d.kind,
          verbs: VERBS,
          ...(d.shortNames.length > 0 && { shortNames: d.shortNames }),
        },
        ...subresourceEntries(d),
      ]),
    ],
  };
}

export type ServerVersionInfo = {
  major: string;
  minor: string;
  /** The compatibility-version fields (KEP-4330) that newer kube-apiservers add. */
  emulationMajor?: string;
  emulationMinor?: string;
  minCompatibilityMajor?: string;
  minCompatibilityMinor?: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
};

/**
 * /version for a `v1.MINOR.PATCH` git version, field for field as kube-apiserver answers it. From
 * 1.33 that includes the emulation version (the binary's own, no --emulated-version in the lab) and
 * the minimum compatibility version (one minor back).
 */
export function versionInfo(gitVersion: string): ServerVersionInfo {
  const m = /^v(\d+)\.(\d+)/.exec(gitVersion);
  const major = m?.[1] ?? '1';
  const minor = m?.[2] ?? '0';
  const compatibility =
    major === '1' && Number(minor) >= 33
      ? {
          emulationMajor: major,
          emulationMinor: minor,
          minCompatibilityMajor: major,
          minCompatibilityMinor: String(Number(minor) - 1),
        }
      : {};
  return {
    major,
    minor,
    ...compatibility,
    gitVersion,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: 'go1.24.0',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}
