/**
 * Just enough version handling for Kubernetes ("v1.32.4", "1.37.0-rc.0"), etcd ("3.5.16",
 * image tag "3.5.16-0") and Talos ("v1.13.9") version strings.
 */

export interface Version {
  major: number;
  minor: number;
  patch: number;
  /** Pre-release identifiers ("rc.0"), empty for a release. */
  pre: string;
}

const VERSION_RE = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

export function parseVersion(text: string): Version | undefined {
  const m = VERSION_RE.exec(text.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0), pre: m[4] ?? '' };
}

/** Negative when a < b, 0 when equal, positive when a > b. A pre-release sorts before its release. */
export function compareVersions(a: Version, b: Version): number {
  if (a.major !== b.major) return a.major - b.major;
  if (a.minor !== b.minor) return a.minor - b.minor;
  if (a.patch !== b.patch) return a.patch - b.patch;
  if (a.pre === b.pre) return 0;
  if (a.pre === '') return 1;
  if (b.pre === '') return -1;
  return a.pre < b.pre ? -1 : 1;
}

/** Compares major.minor only (patch and pre-release ignored): negative, 0 or positive. */
export function compareMinor(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor;
}

/** Compares two version strings; unparseable strings sort first (treated as oldest) so they stand out. */
export function compareVersionText(a: string, b: string): number {
  const va = parseVersion(a);
  const vb = parseVersion(b);
  if (!va || !vb) return va ? 1 : vb ? -1 : a.localeCompare(b);
  return compareVersions(va, vb);
}

/** "1.32" for "v1.32.4". */
export function minorOf(text: string): string | undefined {
  const v = parseVersion(text);
  return v ? `${v.major}.${v.minor}` : undefined;
}

/** Kubernetes versions are written with a leading "v" everywhere kubeadm writes them. */
export function normalizeKubernetesVersion(text: string): string {
  const t = text.trim();
  return parseVersion(t) && !t.startsWith('v') ? `v${t}` : t;
}

/**
 * The etcd version an image tag stands for: registry.k8s.io/etcd tags carry a build suffix
 * ("3.5.16-0"); upstream tags carry a "v" ("v3.5.16"). Undefined when the tag is not a version.
 */
export function etcdVersionFromTag(tag: string): string | undefined {
  const m = /^v?(\d+\.\d+\.\d+)(?:-(\d+))?$/.exec(tag.trim());
  return m ? m[1] : undefined;
}

/** The tag of an image reference ("registry:5000/kube-apiserver:v1.32.4@sha256:…" → "v1.32.4"). */
export function imageTag(image: string): string | undefined {
  const noDigest = image.split('@')[0] ?? image;
  const lastSlash = noDigest.lastIndexOf('/');
  const lastColon = noDigest.lastIndexOf(':');
  return lastColon > lastSlash ? noDigest.slice(lastColon + 1) : undefined;
}
