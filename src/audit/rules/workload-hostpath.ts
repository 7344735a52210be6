/**
 * hostPath and FlexVolume rules (blockers.md "Workloads and storage"): what pod templates and
 * PersistentVolumes expect of the host filesystem, judged against the target Talos release's
 * filesystem (talos.md §6). One finding per controller and volume, never per pod.
 */
import type { TalosRelease } from '../../knowledge/talos.js';
import type { KubeObject } from '../../snapshot/model.js';
import type { Evidence } from '../findings.js';
import type { AuditContext, Rule, RuleFinding } from '../rule.js';
import { WORKLOADS } from '../rule-reads.js';
import type { SnapshotIndex } from '../snapshot-index.js';
import {
  FLEXVOLUME_DIR,
  FLEXVOLUME_PLUGIN_DIR,
  flexVolumeDirRemoved,
  type HostPathVerdict,
  judgeHostPath,
  normalizeHostPath,
  under,
} from './workload-paths.js';
import {
  describeObj,
  listSome,
  mountUse,
  nodesOf,
  objectEvidence,
  type Template,
  templatesOf,
  type VolumeSpec,
  volumesOf,
} from './workload-pods.js';

const DOCS = (id: string) => `docs/rules.md#${id}`;

/** One hostPath use: a template volume or a PersistentVolume. */
interface HostPathUse {
  object: KubeObject;
  field: string;
  path: string;
  type: string | undefined;
  /** e.g. "volume cache, mounted read-write by app" */
  what: string;
  verdict: HostPathVerdict;
  /** Nodes the affected pods run on (templates) or the PV is pinned to. */
  nodes: string[];
}

function templateUses(t: Template, release: TalosRelease): HostPathUse[] {
  const out: HostPathUse[] = [];
  for (const v of volumesOf(t.podSpec)) {
    const path = v.hostPath?.path;
    if (typeof path !== 'string' || !path) continue;
    const type = typeof v.hostPath?.type === 'string' && v.hostPath.type ? v.hostPath.type : undefined;
    const use = mountUse(t.podSpec, v.name);
    const how = !use.mounted
      ? 'not mounted by any container'
      : use.writable
        ? `mounted read-write by ${use.writers.join(', ') || 'a container'}`
        : 'mounted read-only';
    out.push({
      object: t.object,
      field: `${t.specPath}.volumes[${v.name ?? '?'}].hostPath.path`,
      path,
      type,
      what: `volume ${v.name ?? '?'}${type ? ` (type ${type})` : ''}, ${how}`,
      verdict: judgeHostPath(path, type, use.writable, release),
      nodes: nodesOf(t.pods),
    });
  }
  return out;
}

/** Node names a PV's required node affinity pins it to (kubernetes.io/hostname In …). */
export function pvNodes(pv: KubeObject): string[] {
  const terms: unknown = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms;
  const out: string[] = [];
  if (!Array.isArray(terms)) return out;
  for (const term of terms as {
    matchExpressions?: { key?: string; operator?: string; values?: unknown[] }[];
  }[]) {
    for (const e of term?.matchExpressions ?? []) {
      if (e.key === 'kubernetes.io/hostname' && e.operator === 'In' && Array.isArray(e.values))
        for (const v of e.values) if (typeof v === 'string' && !out.includes(v)) out.push(v);
    }
  }
  return out;
}

function pvUses(pv: KubeObject, release: TalosRelease): HostPathUse[] {
  const out: HostPathUse[] = [];
  const nodes = pvNodes(pv);
  const hp = pv.spec?.hostPath;
  if (typeof hp?.path === 'string' && hp.path) {
    const type = typeof hp.type === 'string' && hp.type ? hp.type : undefined;
    out.push({
      object: pv,
      field: 'spec.hostPath.path',
      path: hp.path,
      type,
      what: `hostPath PersistentVolume${type ? ` (type ${type})` : ''}, a data volume`,
      // A PV holds data: pods write to it.
      verdict: judgeHostPath(hp.path, type, true, release),
      nodes,
    });
  }
  const local = pv.spec?.local?.path;
  if (typeof local === 'string' && local) {
    out.push({
      object: pv,
      field: 'spec.local.path',
      path: local,
      type: undefined,
      what: 'local PersistentVolume, a data volume that must already exist on the node',
      verdict: judgeHostPath(local, undefined, true, release),
      nodes,
    });
  }
  return out;
}

const usesCache = new WeakMap<SnapshotIndex, { release: TalosRelease; uses: HostPathUse[] }>();

/** Every hostPath use, judged once per audit (both hostPath rules read the same verdicts). */
function allUses(ctx: AuditContext): HostPathUse[] {
  const release = ctx.target.talos;
  const hit = usesCache.get(ctx.index);
  if (hit && hit.release === release) return hit.uses;
  const uses: HostPathUse[] = [];
  for (const t of templatesOf(ctx.index)) uses.push(...templateUses(t, release));
  for (const pv of ctx.snapshot.resources.persistentvolumes) uses.push(...pvUses(pv, release));
  usesCache.set(ctx.index, { release, uses });
  return uses;
}

function onNodes(nodes: string[]): string {
  return nodes.length ? ` Its pods run on ${listSome(nodes)}.` : '';
}

/** A writable path to suggest instead: under /var, keeping the last path element. */
export function suggestVarPath(path: string): string {
  const p = normalizeHostPath(path);
  const last = p.split('/').filter(Boolean).at(-1) ?? 'data';
  return `/var/lib/${last}`;
}

function readOnlyRootRemediation(u: HostPathUse, release: TalosRelease): string {
  const v114 = release.configFormat === 'multidoc';
  const mounts = v114
    ? 'The v1.14 schema has no machine.kubelet.extraMounts (equivalent UNCONFIRMED): prefer paths the kubelet already sees under /var.'
    : `Where the kubelet itself must see the path (CSI/volume plugins), add it to machine.kubelet.extraMounts (source and destination ${suggestVarPath(u.path)}, options bind/rshared/rw).`;
  return (
    `Point ${describeObj(u.object)} at a writable path under /var (e.g. ${suggestVarPath(u.path)}; for a Helm chart, its host-path value) ` +
    `before its pods land on a Talos node. ${mounts} If the old path holds node-local data, plan to copy it to the new path on each replacement node.`
  );
}

export const hostpathReadonlyRoot: Rule = {
  id: 'workload.hostpath-readonly-root',
  family: 'workload',
  severity: 'blocker',
  title: 'hostPath on the read-only Talos root filesystem is written or created',
  inputs: ['api', 'target'],
  reads: [...WORKLOADS, 'persistentvolumes'],
  description:
    "Talos's root filesystem is a read-only squashfs: only /var, /opt, /etc/cni, /etc/kubernetes, /run and /tmp are writable. A hostPath there that a pod writes, or that the kubelet must create (DirectoryOrCreate/FileOrCreate), fails with 'read-only file system'.",
  docs: DOCS('workload.hostpath-readonly-root'),
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const u of allUses(ctx)) {
      const v = u.verdict;
      if (v.rule !== 'readonly-root') continue;
      out.push({
        severity: v.severity,
        message: `${describeObj(u.object)} uses hostPath ${v.info.path} (${u.what}): ${v.reason}.${onNodes(u.nodes)}`,
        evidence: [
          objectEvidence(u.object, u.field, {
            observed: u.path,
            expected: 'a path under /var, /opt, /etc/cni, /etc/kubernetes, /run or /tmp',
            note: v.info.areaNote,
          }),
        ],
        remediation: readOnlyRootRemediation(u, ctx.target.talos),
      });
    }
    return out;
  },
};

export const hostpathAbsent: Rule = {
  id: 'workload.hostpath-absent',
  family: 'workload',
  severity: 'risk',
  title: 'hostPath that does not exist on Talos',
  inputs: ['api'],
  reads: [...WORKLOADS, 'persistentvolumes'],
  description:
    "Talos has no Docker socket, no systemd journal, no distro paths and none of kubeadm's files (admin.conf, pki keys, static pod manifests, cloud.conf); a pod mounting them fails to start or reads nothing.",
  docs: DOCS('workload.hostpath-absent'),
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const u of allUses(ctx)) {
      const v = u.verdict;
      if (v.rule !== 'absent') continue;
      const mustExist = u.type === 'Directory' || u.type === 'File' || u.type === 'Socket';
      const effect = mustExist
        ? `type ${u.type} makes the pod fail to start (hostPath type check)`
        : 'the pod starts without the content it expects (or fails when the runtime cannot create the path)';
      out.push({
        message: `${describeObj(u.object)} uses hostPath ${v.info.path} (${u.what}), which a Talos node does not have: ${v.reason}; ${effect}.${onNodes(u.nodes)}`,
        evidence: [objectEvidence(u.object, u.field, { observed: u.path, note: v.reason })],
        remediation: absentRemediation(u),
      });
    }
    return out;
  },
};

function absentRemediation(u: HostPathUse): string {
  const p = u.verdict.info.path;
  if (under(p, '/etc/kubernetes'))
    return `Stop reading ${p} from the host: put the file into a Secret or ConfigMap and mount that (for kubeadm credentials, use a ServiceAccount instead). Do this before the first Talos node runs ${describeObj(u.object)}.`;
  if (/docker/.test(p))
    return `Talos runs containerd only: switch ${describeObj(u.object)} to the CRI socket /run/containerd/containerd.sock (or the Kubernetes API), or drop the mount.`;
  if (/journal|systemd|dbus/.test(p))
    return `Talos has no systemd: collect logs from /var/log/pods and /var/log/containers (or the Talos logging API) instead of ${p}.`;
  return `Provide the content another way (a Secret/ConfigMap mount, or a file created under /var through the machine config and mounted from there) and verify ${describeObj(u.object)} on a canary Talos node.`;
}

// ---------------------------------------------------------------------------------------------

export const flexvolume: Rule = {
  id: 'workload.flexvolume',
  family: 'workload',
  severity: 'blocker',
  title: 'FlexVolume plugin (host path removed in Talos v1.14)',
  inputs: ['api'],
  reads: [...WORKLOADS, 'persistentvolumes'],
  description: `FlexVolume drivers live in ${FLEXVOLUME_PLUGIN_DIR}; Talos v1.14 removes ${FLEXVOLUME_DIR} ("FlexVolume Host Path Removed"). Up to v1.13 it is a writable overlay and FlexVolume still works.`,
  docs: DOCS('workload.flexvolume'),
  check(ctx) {
    const release = ctx.target.talos;
    const removed = flexVolumeDirRemoved(release);
    const severity = removed ? 'blocker' : 'risk';
    const effect = removed
      ? `Talos ${release.version} has no ${FLEXVOLUME_DIR}: the volumes cannot be mounted`
      : `works on Talos ${release.version}, but Talos v1.14 removes ${FLEXVOLUME_DIR}: upgrading Talos later breaks it`;
    const remediation = `Migrate these volumes to a CSI driver before moving to Talos v1.14${removed ? ', or target Talos v1.13 for now' : ''}.`;
    const out: RuleFinding[] = [];
    for (const t of templatesOf(ctx.index)) {
      const evidence: Evidence[] = [];
      const drivers: string[] = [];
      for (const v of volumesOf(t.podSpec)) {
        if (v.flexVolume) {
          const driver = v.flexVolume.driver ?? '?';
          drivers.push(driver);
          evidence.push(
            objectEvidence(t.object, `${t.specPath}.volumes[${v.name ?? '?'}].flexVolume.driver`, {
              observed: driver,
            }),
          );
        }
        const installs = installsFlexDriver(v);
        if (installs)
          evidence.push(
            objectEvidence(t.object, `${t.specPath}.volumes[${v.name ?? '?'}].hostPath.path`, {
              observed: installs,
              note: 'installs or reads FlexVolume drivers on the host',
            }),
          );
      }
      if (evidence.length === 0) continue;
      const what = drivers.length
        ? `uses FlexVolume driver(s) ${drivers.join(', ')}`
        : `mounts the FlexVolume plugin directory ${FLEXVOLUME_PLUGIN_DIR}`;
      out.push({
        severity,
        message: `${describeObj(t.object)} ${what}: ${effect}.${onNodes(nodesOf(t.pods))}`,
        evidence,
        remediation,
      });
    }
    for (const pv of ctx.snapshot.resources.persistentvolumes) {
      const driver = pv.spec?.flexVolume?.driver;
      if (pv.spec?.flexVolume === undefined) continue;
      out.push({
        severity,
        message: `${describeObj(pv)} is a FlexVolume volume (driver ${driver ?? '?'}): ${effect}.`,
        evidence: [objectEvidence(pv, 'spec.flexVolume.driver', { observed: String(driver ?? '?') })],
        remediation,
      });
    }
    return out;
  },
};

function installsFlexDriver(v: VolumeSpec): string | undefined {
  const p = v.hostPath?.path;
  if (typeof p !== 'string') return undefined;
  const n = normalizeHostPath(p);
  return under(n, FLEXVOLUME_PLUGIN_DIR) ? n : undefined;
}
