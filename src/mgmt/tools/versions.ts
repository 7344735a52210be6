/**
 * What `ferry mgmt` needs of each external tool: how to ask its version, how to read the answer
 * (the real output formats, mgmt.md §1–3), the supported range and how to install it.
 */
export type ToolName = 'kind' | 'clusterctl' | 'kubectl' | 'helm' | 'docker' | 'podman';

export interface Semver {
  major: number;
  minor: number;
  patch: number;
}

export interface ToolSpec {
  name: ToolName;
  versionArgs: string[];
  /** The version in the tool's own output, or undefined when the output is not what that tool prints. */
  parse(stdout: string): Semver | undefined;
  /** Inclusive minimum, exclusive maximum. */
  min: Semver;
  below: Semver;
  install: string;
}

const SEMVER = /v?(\d+)\.(\d+)\.(\d+)/;

export function semver(text: string): Semver | undefined {
  const m = SEMVER.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } : undefined;
}

export function compare(a: Semver, b: Semver): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

export function show(v: Semver): string {
  return `${v.major}.${v.minor}.${v.patch}`;
}

const anchored = (re: RegExp) => (stdout: string) => {
  const m = re.exec(stdout.trim());
  return m?.[1] === undefined ? undefined : semver(m[1]);
};

export const TOOLS: Record<ToolName, ToolSpec> = {
  // `kind version` → `kind v0.32.0 go1.X.Y linux/amd64` (mgmt.md §1)
  kind: {
    name: 'kind',
    versionArgs: ['version'],
    parse: anchored(/^kind (v\d+\.\d+\.\d+\S*) /),
    min: { major: 0, minor: 27, patch: 0 },
    below: { major: 1, minor: 0, patch: 0 },
    install: 'install kind v0.32.0: https://kind.sigs.k8s.io/docs/user/quick-start/#installation',
  },
  // `clusterctl version -o short` → `v1.14.0` (mgmt.md §2); the minor must also match the core provider.
  clusterctl: {
    name: 'clusterctl',
    versionArgs: ['version', '-o', 'short'],
    parse: anchored(/^(v\d+\.\d+\.\d+\S*)$/),
    min: { major: 1, minor: 10, patch: 0 },
    below: { major: 2, minor: 0, patch: 0 },
    install:
      'install clusterctl of the same minor as providers.core: https://cluster-api.sigs.k8s.io/user/quick-start#install-clusterctl',
  },
  // `kubectl version --client -o json` → {"clientVersion":{"gitVersion":"v1.36.1",…}}
  kubectl: {
    name: 'kubectl',
    versionArgs: ['version', '--client', '-o', 'json'],
    parse: (stdout) => {
      try {
        const v = (JSON.parse(stdout) as { clientVersion?: { gitVersion?: unknown } }).clientVersion
          ?.gitVersion;
        return typeof v === 'string' ? semver(v) : undefined;
      } catch {
        return undefined;
      }
    },
    min: { major: 1, minor: 31, patch: 0 },
    below: { major: 2, minor: 0, patch: 0 },
    install: 'install kubectl: https://kubernetes.io/docs/tasks/tools/#kubectl',
  },
  // `helm version --short` → `v3.21.4+g<7 hex>` (mgmt.md §3); OCI charts need ≥ 3.8.
  helm: {
    name: 'helm',
    versionArgs: ['version', '--short'],
    parse: anchored(/^(v\d+\.\d+\.\d+)(\+g[0-9a-f]+)?$/),
    min: { major: 3, minor: 8, patch: 0 },
    below: { major: 5, minor: 0, patch: 0 },
    install: 'install Helm 3.8 or newer: https://helm.sh/docs/intro/install/',
  },
  // `docker -v` → `Docker version 27.3.1, build ce12230` (mgmt.md §1)
  docker: {
    name: 'docker',
    versionArgs: ['-v'],
    parse: anchored(/^Docker version (\d+\.\d+\.\d+)/),
    min: { major: 20, minor: 10, patch: 0 },
    below: { major: 100, minor: 0, patch: 0 },
    install:
      'install Docker Engine (https://docs.docker.com/engine/install/) or Podman, which kind runs its node in',
  },
  // `podman --version` → `podman version 5.2.4`
  podman: {
    name: 'podman',
    versionArgs: ['--version'],
    parse: anchored(/^podman version (\d+\.\d+\.\d+)/),
    min: { major: 4, minor: 0, patch: 0 },
    below: { major: 100, minor: 0, patch: 0 },
    install: 'install Podman 4 or newer (https://podman.io/docs/installation) or Docker',
  },
};
