/**
 * Rules about what workloads expect of the host beyond files (blockers.md "Workloads and
 * storage"): CSI node plugins' host tools, kernel modules, host binaries. Talos has no shell, no
 * package manager and forbids module loading by workloads (talos.md §6); such needs become system
 * extensions or machine-config entries.
 */
import type { TalosRelease } from '../../knowledge/talos.js';
import type { KubeObject } from '../../snapshot/model.js';
import type { Evidence } from '../findings.js';
import type { AuditContext, Rule, RuleFinding } from '../rule.js';
import { WORKLOADS } from '../rule-reads.js';
import { judgeHostPath, normalizeHostPath, under } from './workload-paths.js';
import {
  addedCapabilities,
  commandLine,
  containersOf,
  describeObj,
  listSome,
  mountUse,
  nodesOf,
  objectEvidence,
  type Template,
  templatesOf,
  volumesOf,
} from './workload-pods.js';

const DOCS = (id: string) => `docs/rules.md#${id}`;

function isV114(release: TalosRelease): boolean {
  return release.configFormat === 'multidoc';
}

/**
 * The Cilium agent DaemonSet is judged by cni.cilium-values (SYS_MODULE, cgroup mounts, nsenter
 * into the host for cgroup2/sysctl fixes); reporting it again here would double-count one fix.
 */
function isCiliumAgent(ctx: AuditContext, o: KubeObject): boolean {
  const agent = ctx.facts.cni.ciliumAgent.value;
  return (
    !!agent &&
    o.kind === 'DaemonSet' &&
    o.metadata.name === agent.name &&
    o.metadata.namespace === agent.namespace
  );
}

function modulesRemediation(release: TalosRelease, modules: string[]): string {
  const list = modules.length ? modules.join(', ') : 'the modules it loads';
  const where = isV114(release)
    ? `a KernelModuleConfig document per module (${list})`
    : `machine.kernel.modules (${modules.map((m) => `{name: ${m}}`).join(', ') || '{name: <module>}'})`;
  return `Declare ${list} in the Talos machine config (${where}); modules that are not in the Talos kernel come from a system extension. Drop SYS_MODULE and module loading from the workload.`;
}

// ---------------------------------------------------------------------------------------------
// workload.kernel-modules

/** Images known to need kernel modules, and which. Hints, not proof: verify on a canary node. */
const MODULE_IMAGES: { pattern: RegExp; modules: string[]; what: string }[] = [
  { pattern: /wireguard|wg-easy|squat\/kilo|netmaker/i, modules: ['wireguard'], what: 'WireGuard' },
  {
    pattern: /longhorn-(manager|engine|instance-manager)|open-iscsi|iscsid/i,
    modules: ['iscsi_tcp'],
    what: 'iSCSI',
  },
  { pattern: /cephcsi/i, modules: ['rbd'], what: 'Ceph RBD' },
  { pattern: /drbd|piraeus|linstor/i, modules: ['drbd'], what: 'DRBD' },
];

export const kernelModules: Rule = {
  id: 'workload.kernel-modules',
  family: 'workload',
  severity: 'risk',
  title: 'Workload loads kernel modules',
  inputs: ['api'],
  reads: [...WORKLOADS],
  description:
    'Talos forbids module loading by workloads: containers with SYS_MODULE, writable /lib/modules mounts, modprobe/insmod, or software known to need modules (WireGuard, iSCSI, RBD) need the modules declared in the machine config.',
  docs: DOCS('workload.kernel-modules'),
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const t of templatesOf(ctx.index)) {
      if (isCiliumAgent(ctx, t.object)) continue;
      const evidence: Evidence[] = [];
      const modules = new Set<string>();
      const why: string[] = [];
      for (const { container, path } of containersOf(t.podSpec)) {
        const base = `${t.specPath}.${path}`;
        const caps = addedCapabilities(container);
        const cap = caps.find((c) => c === 'SYS_MODULE' || c === 'ALL');
        if (cap) {
          evidence.push(
            objectEvidence(t.object, `${base}.securityContext.capabilities.add`, { observed: cap }),
          );
          why.push(`container ${container.name ?? '?'} adds ${cap}`);
        }
        const cmd = commandLine(container);
        const load = /\b(modprobe|insmod)\b/.exec(cmd);
        if (load) {
          evidence.push(
            objectEvidence(t.object, `${base}.command`, { observed: load[1], note: 'loads modules' }),
          );
          why.push(`container ${container.name ?? '?'} runs ${load[1]}`);
        }
        const image = container.image ?? '';
        const known = MODULE_IMAGES.find((k) => k.pattern.test(image));
        if (known) {
          for (const m of known.modules) modules.add(m);
          evidence.push(
            objectEvidence(t.object, `${base}.image`, {
              observed: image,
              note: `${known.what} needs kernel module(s) ${known.modules.join(', ')}`,
            }),
          );
          why.push(`image ${image} (${known.what}) needs ${known.modules.join(', ')}`);
        }
      }
      for (const v of volumesOf(t.podSpec)) {
        const p = v.hostPath?.path;
        if (typeof p !== 'string') continue;
        const n = normalizeHostPath(p);
        if (!under(n, '/lib/modules') && !under(n, '/usr/lib/modules')) continue;
        if (!mountUse(t.podSpec, v.name).writable) continue;
        evidence.push(
          objectEvidence(t.object, `${t.specPath}.volumes[${v.name ?? '?'}].hostPath.path`, {
            observed: n,
            note: 'mounted read-write',
          }),
        );
        why.push(`${n} is mounted read-write`);
      }
      if (evidence.length === 0) continue;
      out.push({
        message: `${describeObj(t.object)} expects to load kernel modules (${listSome(why, 4)}); Talos does not let workloads load modules.${onNodes(t)}`,
        evidence,
        remediation: modulesRemediation(ctx.target.talos, [...modules]),
      });
    }
    return out;
  },
};

function onNodes(t: Template): string {
  const nodes = nodesOf(t.pods);
  return nodes.length ? ` Pods run on ${listSome(nodes)}.` : '';
}

// ---------------------------------------------------------------------------------------------
// workload.host-binaries

const BIN_DIRS = ['/bin', '/sbin', '/usr/bin', '/usr/sbin', '/usr/local/bin', '/usr/local/sbin'];

export const hostBinaries: Rule = {
  id: 'workload.host-binaries',
  family: 'workload',
  severity: 'risk',
  title: 'Workload runs host binaries',
  inputs: ['api'],
  reads: [...WORKLOADS],
  description:
    'Talos has no shell, no package manager and no distro binaries: pods that nsenter/chroot into the host or mount /usr/bin, /bin or /sbin to run host tools stop working.',
  docs: DOCS('workload.host-binaries'),
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const t of templatesOf(ctx.index)) {
      if (isCiliumAgent(ctx, t.object)) continue;
      const evidence: Evidence[] = [];
      const why: string[] = [];
      let hostRoot = false;
      let hostProc = false;
      for (const v of volumesOf(t.podSpec)) {
        const p = v.hostPath?.path;
        if (typeof p !== 'string') continue;
        const n = normalizeHostPath(p);
        if (n === '/') hostRoot = true;
        if (n === '/proc') hostProc = true;
        if (BIN_DIRS.some((b) => under(n, b))) {
          evidence.push(
            objectEvidence(t.object, `${t.specPath}.volumes[${v.name ?? '?'}].hostPath.path`, {
              observed: n,
            }),
          );
          why.push(`mounts ${n}`);
        }
      }
      const hostPID = t.podSpec?.hostPID === true;
      for (const { container, path } of containersOf(t.podSpec)) {
        const cmd = commandLine(container);
        const nsenter = /\bnsenter\b/.test(cmd) && (hostPID || hostProc);
        const chroot = /\bchroot\b/.test(cmd) && hostRoot;
        if (!nsenter && !chroot) continue;
        const tool = nsenter ? 'nsenter' : 'chroot';
        evidence.push(
          objectEvidence(t.object, `${t.specPath}.${path}.command`, {
            observed: tool,
            note: nsenter ? 'enters the host namespaces' : 'changes root into the host filesystem',
          }),
        );
        why.push(`container ${container.name ?? '?'} runs ${tool} into the host`);
      }
      if (evidence.length === 0) continue;
      out.push({
        message: `${describeObj(t.object)} relies on host binaries (${listSome(why, 4)}); Talos has no shell, package manager or distro tools.${onNodes(t)}`,
        evidence,
        remediation:
          'Replace host tools with a Talos system extension (for storage/network tools) or an image that brings its own binaries; use the Talos API instead of nsenter/chroot for host changes. Verify on a canary Talos node.',
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// workload.csi-driver

/** Host tools/modules a driver is known to need, by driver name. Hints to verify on a canary. */
const DRIVER_NEEDS: { pattern: RegExp; need: string; iscsi?: boolean }[] = [
  {
    pattern: /longhorn/i,
    need: 'iSCSI and util-linux tools (extensions siderolabs/iscsi-tools, siderolabs/util-linux-tools)',
    iscsi: true,
  },
  {
    pattern: /iscsi|csi\.hpe\.com|trident|democratic-csi|synology|jiva/i,
    need: 'iSCSI initiator (extension siderolabs/iscsi-tools)',
    iscsi: true,
  },
  { pattern: /rbd\.csi\.ceph\.com/i, need: 'Ceph RBD (kernel module rbd)' },
  { pattern: /cephfs\.csi\.ceph\.com/i, need: 'CephFS (kernel module ceph)' },
  { pattern: /nfs/i, need: 'NFS client' },
  { pattern: /nvme|mayastor/i, need: 'NVMe-oF (kernel module nvme_tcp)' },
  { pattern: /zfs/i, need: 'ZFS (extension siderolabs/zfs)' },
  { pattern: /lvm|topolvm/i, need: 'LVM (device-mapper, lvm2 tools)' },
  { pattern: /drbd|linstor|piraeus/i, need: 'DRBD (extension siderolabs/drbd)' },
];

const PLUGIN_DIR = /\/var\/lib\/kubelet\/plugins\/([^/\s"']+)/g;
const REGISTRY_DIR = '/var/lib/kubelet/plugins_registry';

/** Driver names a DaemonSet serves as a CSI node plugin (from its socket paths), or [] if none. */
export function csiDriversOfDaemonSet(t: Template): { drivers: string[]; isNodePlugin: boolean } {
  const drivers = new Set<string>();
  let isNodePlugin = false;
  const scan = (text: string) => {
    for (const m of text.matchAll(PLUGIN_DIR)) if (m[1] && m[1] !== 'kubernetes.io') drivers.add(m[1]);
  };
  for (const v of volumesOf(t.podSpec)) {
    const p = v.hostPath?.path;
    if (typeof p !== 'string') continue;
    const n = normalizeHostPath(p);
    if (n === REGISTRY_DIR) isNodePlugin = true;
    scan(n);
  }
  for (const { container } of containersOf(t.podSpec)) {
    if (/node-driver-registrar/.test(container.image ?? '')) isNodePlugin = true;
    scan(commandLine(container));
    for (const e of container.env ?? []) if (typeof e.value === 'string') scan(e.value);
  }
  return { drivers: [...drivers], isNodePlugin: isNodePlugin || drivers.size > 0 };
}

export const csiDriver: Rule = {
  id: 'workload.csi-driver',
  family: 'workload',
  severity: 'risk',
  title: 'CSI driver needs host paths, tools or modules',
  inputs: ['api'],
  reads: [...WORKLOADS, 'csidrivers'],
  description:
    'CSI node plugins often need host tools (iSCSI, NVMe-oF, RBD, NFS, ZFS, LVM), kernel modules or host files; Talos provides tools only through system extensions, and v1.14 workload isolation breaks in-tree iSCSI.',
  docs: DOCS('workload.csi-driver'),
  check(ctx) {
    const release = ctx.target.talos;
    const driverObjects = new Map<string, KubeObject>();
    for (const d of ctx.snapshot.resources.csidrivers) driverObjects.set(d.metadata.name, d);
    const plugins = new Map<string, Template[]>();
    for (const t of templatesOf(ctx.index)) {
      if (t.kind !== 'DaemonSet') continue;
      const found = csiDriversOfDaemonSet(t);
      for (const d of found.drivers) {
        const list = plugins.get(d);
        if (list) list.push(t);
        else plugins.set(d, [t]);
      }
    }
    const names = [...new Set([...driverObjects.keys(), ...plugins.keys()])].sort();
    const out: RuleFinding[] = [];
    for (const name of names) {
      const obj = driverObjects.get(name);
      const dss = plugins.get(name) ?? [];
      const evidence: Evidence[] = [];
      const concerns: string[] = [];
      let iscsi = false;
      const known = DRIVER_NEEDS.find((k) => k.pattern.test(name));
      if (known) {
        concerns.push(`needs ${known.need}`);
        iscsi = known.iscsi === true;
      }
      let needs = known !== undefined;
      for (const ds of dss) {
        for (const v of volumesOf(ds.podSpec)) {
          const p = v.hostPath?.path;
          if (typeof p !== 'string' || !p) continue;
          const type = v.hostPath?.type || undefined;
          const verdict = judgeHostPath(p, type, mountUse(ds.podSpec, v.name).writable, release);
          if (verdict.rule === 'none') continue;
          evidence.push(
            objectEvidence(ds.object, `${ds.specPath}.volumes[${v.name ?? '?'}].hostPath.path`, {
              observed: verdict.info.path,
              note: verdict.reason,
            }),
          );
          concerns.push(`${describeObj(ds.object)} mounts ${verdict.info.path} (see workload.hostpath-*)`);
        }
        for (const { container, path } of containersOf(ds.podSpec)) {
          const tool = /\b(iscsiadm|multipath|nsenter|zpool|lvcreate|vgcreate|mount\.nfs)\b/.exec(
            commandLine(container),
          );
          if (!tool) continue;
          if (tool[1] === 'iscsiadm' && !iscsi) {
            iscsi = true;
            needs = true;
            concerns.push('needs the iSCSI initiator (extension siderolabs/iscsi-tools)');
          }
          evidence.push(
            objectEvidence(ds.object, `${ds.specPath}.${path}.command`, {
              observed: tool[1],
              note: 'host tool',
            }),
          );
          concerns.push(`${describeObj(ds.object)} runs ${tool[1]}`);
        }
      }
      if (dss.length === 0 && obj)
        concerns.push(
          'ferry found no node-plugin DaemonSet for it in the snapshot, so its host needs are unchecked',
        );
      if (concerns.length === 0) continue;
      if (iscsi && isV114(release))
        concerns.push(
          `Talos ${release.version} generates SecurityProfileConfig.workloadIsolation: true, which breaks in-tree iSCSI`,
        );
      const head: Evidence = obj
        ? objectEvidence(obj, 'metadata.name', { observed: name })
        : objectEvidence(dss[0]!.object, `${dss[0]!.specPath}.volumes`, {
            observed: name,
            note: 'CSI node plugin (no CSIDriver object)',
          });
      const nodes = new Set<string>();
      for (const ds of dss) for (const n of nodesOf(ds.pods)) nodes.add(n);
      out.push({
        message: `CSI driver ${name}: ${listSome(concerns, 4)}.${dss.length ? ` Node plugin ${dss.map((d) => describeObj(d.object)).join(', ')} runs on ${nodes.size} node(s).` : ''}`,
        evidence: [head, ...evidence],
        remediation: [
          needs
            ? `Add what ${name} needs to the Talos nodes: system extensions in the install image (schematic) and kernel modules in ${isV114(release) ? 'KernelModuleConfig documents' : 'machine.kernel.modules'}.`
            : '',
          evidence.length
            ? 'Fix the host mounts and host tools listed above (see workload.hostpath-* and workload.host-binaries).'
            : '',
          'Verify the driver on one canary Talos node (provision, attach, mount, detach a test volume) before draining the next node.',
        ]
          .filter(Boolean)
          .join(' '),
        subject: { kind: 'CSIDriver', group: 'storage.k8s.io', name },
        field: 'nodePlugin',
      });
    }
    return out;
  },
};
