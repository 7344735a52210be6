/**
 * What a hostPath means on a Talos node (talos.md §6 "Filesystem"): which areas are writable,
 * which are the read-only squashfs root, and which paths a kubeadm node has that Talos never has.
 * Pure data and pure functions; the workload rules decide what to report.
 */
import type { TalosRelease } from '../../knowledge/talos.js';
import { minorNumber } from '../../knowledge/talos-config.js';

/** Where a path lives on Talos. */
export type PathArea =
  /** Writable: /var (EPHEMERAL), /opt (overlay), /etc/cni, /etc/kubernetes, /run, /system, tmp. */
  | 'writable'
  /** Pseudo filesystems the kernel provides: /proc, /sys, /dev. */
  | 'kernel'
  /** The read-only squashfs root: /usr, /lib, the rest of /etc, and everything not listed above. */
  | 'read-only';

export interface PathInfo {
  path: string;
  area: PathArea;
  /** Short reason, quoted in findings. */
  areaNote: string;
}

export type Presence =
  | { kind: 'present' }
  | { kind: 'absent'; why: string }
  /** On the read-only root but not a path ferry knows Talos ships. */
  | { kind: 'unknown' };

/** "/etc//foo/./bar/" → "/etc/foo/bar"; ".." is resolved lexically. Relative paths get a leading "/". */
export function normalizeHostPath(p: string): string {
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

/** True when `path` is `base` or below it (both normalized). */
export function under(path: string, base: string): boolean {
  return base === '/' || path === base || path.startsWith(`${base}/`);
}

/** FlexVolume's host directory: a writable overlay up to v1.13, removed in v1.14 (talos.md §6). */
export const FLEXVOLUME_DIR = '/usr/libexec/kubernetes';
export const FLEXVOLUME_PLUGIN_DIR = '/usr/libexec/kubernetes/kubelet-plugins';

export function flexVolumeDirRemoved(release: TalosRelease): boolean {
  return minorNumber(release) >= 14;
}

/** talos.md §6, per release. */
export function pathInfo(raw: string, release: TalosRelease): PathInfo {
  const path = normalizeHostPath(raw);
  const v114 = minorNumber(release) >= 14;
  const at = (area: PathArea, areaNote: string): PathInfo => ({ path, area, areaNote });
  for (const k of ['/proc', '/sys', '/dev'])
    if (under(path, k)) return at('kernel', `${k} is a kernel filesystem`);
  if (under(path, '/var')) return at('writable', '/var is the writable EPHEMERAL partition');
  if (under(path, '/opt')) return at('writable', '/opt is a writable overlay on EPHEMERAL');
  if (under(path, '/run')) return at('writable', '/run is a tmpfs');
  if (under(path, '/system')) return at('writable', '/system is a Talos tmpfs');
  if (under(path, '/tmp')) return at('writable', '/tmp is a 64 MiB noexec tmpfs');
  if (under(path, '/etc/cni'))
    return at(
      'writable',
      v114 ? '/etc/cni is a tmpfs in v1.14 (lost on reboot)' : '/etc/cni is a writable overlay',
    );
  if (under(path, '/etc/kubernetes'))
    return at(
      'writable',
      v114
        ? '/etc/kubernetes is a Talos-managed tmpfs in v1.14'
        : '/etc/kubernetes is a Talos-managed overlay',
    );
  if (under(path, FLEXVOLUME_DIR)) {
    return v114
      ? at(
          'read-only',
          `${FLEXVOLUME_DIR} is removed in Talos v1.14 ("FlexVolume Host Path Removed"); /usr is read-only`,
        )
      : at('writable', `${FLEXVOLUME_DIR} is a writable overlay up to Talos v1.13`);
  }
  if (under(path, '/etc'))
    return at('read-only', '/etc is read-only on Talos outside /etc/cni and /etc/kubernetes');
  if (under(path, '/usr') || under(path, '/lib') || under(path, '/bin') || under(path, '/sbin'))
    return at('read-only', '/usr (and /lib, /bin, /sbin through it) is the read-only squashfs root');
  return at('read-only', 'the Talos root filesystem is a read-only squashfs image');
}

/** Paths on the read-only root that Talos does ship (talos.md §6). Exact paths and their subtrees. */
const PRESENT_TREES = [
  '/etc/ssl',
  // Symlinks to /etc/ssl on Talos; mounting them works (blockers.md workload.hostpath-absent).
  '/etc/pki',
  '/etc/ca-certificates',
  '/usr/share/ca-certificates',
  '/usr/local/share/ca-certificates',
  // /lib → usr/lib; kernel modules resolve.
  '/lib/modules',
  '/usr/lib/modules',
];
const PRESENT_EXACT = [
  '/',
  '/etc',
  '/usr',
  '/lib',
  '/usr/lib',
  '/etc/hosts',
  '/etc/resolv.conf',
  '/etc/os-release',
];

/** What Talos keeps in /etc/kubernetes (talos.md §6); everything else there is kubeadm's. */
const TALOS_ETC_KUBERNETES = [
  '/etc/kubernetes',
  '/etc/kubernetes/kubelet.yaml',
  '/etc/kubernetes/bootstrap-kubeconfig',
  '/etc/kubernetes/kubeconfig-kubelet',
  '/etc/kubernetes/pki',
  '/etc/kubernetes/pki/ca.crt',
  '/etc/kubernetes/kubelet-credentialproviderconfig.yaml',
  // Present but unused (disableManifestsDirectory): mounting the directory works, its files are gone.
  '/etc/kubernetes/manifests',
];

/** Paths a kubeadm node has and a Talos node never has, with why (talos.md §6). */
const ABSENT_TREES: { base: string; why: string }[] = [
  { base: '/var/run/docker.sock', why: 'Talos runs containerd only: there is no Docker socket' },
  { base: '/run/docker.sock', why: 'Talos runs containerd only: there is no Docker socket' },
  { base: '/var/lib/docker', why: 'Talos runs containerd only: there is no Docker data directory' },
  { base: '/var/run/docker', why: 'Talos runs containerd only' },
  { base: '/run/docker', why: 'Talos runs containerd only' },
  { base: '/var/run/crio', why: 'Talos runs containerd only' },
  { base: '/run/crio', why: 'Talos runs containerd only' },
  { base: '/var/log/journal', why: 'Talos has no systemd journal' },
  { base: '/run/log/journal', why: 'Talos has no systemd journal' },
  { base: '/run/systemd', why: 'Talos has no systemd' },
  { base: '/var/run/systemd', why: 'Talos has no systemd' },
  { base: '/run/dbus', why: 'Talos has no D-Bus' },
  { base: '/var/run/dbus', why: 'Talos has no D-Bus' },
  { base: '/etc/cacert', why: 'Talos does not create /etc/cacert (UNCONFIRMED with system extensions)' },
  {
    base: '/var/lib/kubelet/config.yaml',
    why: 'kubeadm writes it; the Talos kubelet reads /etc/kubernetes/kubelet.yaml',
  },
  { base: '/var/lib/kubelet/kubeadm-flags.env', why: 'kubeadm writes it; Talos has no kubeadm files' },
];

/** Whether Talos has this path (only meaningful for what ferry knows; see Presence). */
export function presenceOnTalos(info: PathInfo, release: TalosRelease): Presence {
  const p = info.path;
  for (const a of ABSENT_TREES) if (under(p, a.base)) return { kind: 'absent', why: a.why };
  if (under(p, '/etc/kubernetes')) {
    if (TALOS_ETC_KUBERNETES.includes(p)) return { kind: 'present' };
    return {
      kind: 'absent',
      why: 'kubeadm file: /etc/kubernetes on Talos holds only kubelet.yaml, bootstrap-kubeconfig, kubeconfig-kubelet and pki/ca.crt (no admin.conf, no pki keys, no static pod manifests)',
    };
  }
  if (under(p, FLEXVOLUME_DIR) && flexVolumeDirRemoved(release))
    return { kind: 'absent', why: `${FLEXVOLUME_DIR} is removed in Talos v1.14` };
  if (info.area !== 'read-only') return { kind: 'present' };
  if (PRESENT_EXACT.includes(p) || PRESENT_TREES.some((t) => under(p, t))) return { kind: 'present' };
  if (under(p, FLEXVOLUME_DIR)) return { kind: 'present' };
  return { kind: 'unknown' };
}

/** hostPath types that make the kubelet create the path when it is missing. */
export function createsPath(type: string | undefined): boolean {
  return type === 'DirectoryOrCreate' || type === 'FileOrCreate';
}

/** The verdict for one hostPath use (a template volume or a PV), shared by both hostPath rules. */
export type HostPathVerdict =
  | { rule: 'readonly-root'; severity: 'blocker' | 'risk'; reason: string; info: PathInfo }
  | { rule: 'absent'; reason: string; info: PathInfo }
  | { rule: 'none'; info: PathInfo };

/**
 * blockers.md workload.hostpath-readonly-root: a path on the read-only root that is written
 * (mounted read-write) or created (type *OrCreate) fails on Talos: blocker, unless Talos ships the
 * path and nothing needs to create it (then only writes fail: risk).
 * workload.hostpath-absent: otherwise, a path Talos does not have (known absent, or on the root
 * image and not one ferry knows Talos ships).
 */
export function judgeHostPath(
  raw: string,
  type: string | undefined,
  writable: boolean,
  release: TalosRelease,
): HostPathVerdict {
  const info = pathInfo(raw, release);
  const presence = presenceOnTalos(info, release);
  if (info.area === 'read-only') {
    if (createsPath(type) && presence.kind !== 'present') {
      return {
        rule: 'readonly-root',
        severity: 'blocker',
        reason: `type ${type} makes the kubelet create ${info.path}, but ${info.areaNote} (mkdir fails: read-only file system)`,
        info,
      };
    }
    if (writable) {
      if (presence.kind === 'present') {
        return {
          rule: 'readonly-root',
          severity: 'risk',
          reason: `it is mounted read-write, but ${info.areaNote}: writes fail with EROFS`,
          info,
        };
      }
      return {
        rule: 'readonly-root',
        severity: 'blocker',
        reason: `it is mounted read-write and ${info.path} does not exist on Talos; ${info.areaNote}, so it can be neither created nor written`,
        info,
      };
    }
  }
  if (presence.kind === 'absent') return { rule: 'absent', reason: presence.why, info };
  if (presence.kind === 'unknown') {
    return {
      rule: 'absent',
      reason: `${info.areaNote} and holds only Talos's own files; ferry does not know ${info.path} to be among them`,
      info,
    };
  }
  return { rule: 'none', info };
}
