/**
 * The Target: what the operator chooses (design.md "Target"). Every field has an explicit default,
 * and the resolved target records where each value came from so commands can print it.
 */
import { usageError } from '../errors.js';
import {
  assumedFactsNote,
  DEFAULT_TALOS_VERSION,
  lookupTalosRelease,
  SUPPORTED_TALOS_MINORS,
  TALOS_RELEASES,
  type TalosRelease,
} from '../knowledge/talos.js';
import { compareMinor, compareVersions, normalizeKubernetesVersion, parseVersion } from '../util/semver.js';

export const PROVISIONERS = ['manual', 'exec', 'capi'] as const;
export type Provisioner = (typeof PROVISIONERS)[number];

export const KUBEPRISM_MODES = ['on', 'off'] as const;
export type KubePrismMode = (typeof KUBEPRISM_MODES)[number];

/** Infrastructure ferry has specific knowledge of; "generic" assumes nothing about it. */
export const INFRAS = ['generic', 'proxmox', 'vsphere'] as const;
export type Infra = (typeof INFRAS)[number];

/** What the operator said (flags); everything optional. */
export interface TargetInput {
  talosVersion?: string;
  kubernetesVersion?: string;
  kubeprism?: KubePrismMode;
  provisioner?: Provisioner;
  infra?: Infra;
}

export type ChoiceOrigin = 'flag' | 'default' | 'cluster';

export interface TargetChoice {
  field: keyof TargetInput;
  /** undefined only for kubernetesVersion when the cluster's version is unknown and none was given. */
  value: string | undefined;
  origin: ChoiceOrigin;
  note: string;
}

export interface Target {
  /** The Talos release, e.g. "v1.13.9"; an untabled patch ("v1.10.6") carries talos.assumedFrom. */
  talosVersion: string;
  talos: TalosRelease;
  /** "v1.32.4"; default: the cluster's current version. */
  kubernetesVersion: string | undefined;
  kubeprism: KubePrismMode;
  provisioner: Provisioner;
  infra: Infra;
  /** Each field with its origin, in display order. */
  choices: TargetChoice[];
}

export const TARGET_DEFAULTS = {
  talosVersion: DEFAULT_TALOS_VERSION,
  // Talos generates KubePrism enabled (talos.md §4.5); "on" keeps the target honest about that.
  kubeprism: 'on' as KubePrismMode,
  provisioner: 'manual' as Provisioner,
  infra: 'generic' as Infra,
};

function knownReleases(): string {
  return TALOS_RELEASES.map((r) => r.version).join(', ');
}

/**
 * Resolves the operator's choices against ferry's knowledge. `clusterKubernetesVersion` is the
 * cluster's current version (from facts): the default Kubernetes target, because a migration should
 * not also be an upgrade.
 */
export function resolveTarget(input: TargetInput = {}, clusterKubernetesVersion?: string): Target {
  const choices: TargetChoice[] = [];

  const talosText = input.talosVersion ?? TARGET_DEFAULTS.talosVersion;
  const lookup = lookupTalosRelease(talosText);
  if (lookup.kind === 'refused') {
    throw usageError(
      `--talos-version "${talosText}" ${lookup.problem}`,
      `known Talos lines: ${SUPPORTED_TALOS_MINORS.map((m) => `v${m}`).join(', ')}; give a line (v1.13: its newest tabled release), ` +
        `any patch of one (v1.13.4), or a tabled release: ${knownReleases()}`,
    );
  }
  const talos = lookup.release;
  choices.push({
    field: 'talosVersion',
    value: talos.version,
    origin: input.talosVersion === undefined ? 'default' : 'flag',
    note:
      input.talosVersion === undefined
        ? 'default: the newest stable Talos release ferry knows'
        : (assumedFactsNote(talos) ??
          (/^v?\d+\.\d+$/.test(input.talosVersion.trim())
            ? `newest release ferry knows of the ${talos.minor} line`
            : 'as given')),
  });

  let kubernetesVersion: string | undefined;
  if (input.kubernetesVersion !== undefined) {
    kubernetesVersion = normalizeKubernetesVersion(input.kubernetesVersion);
    if (!parseVersion(kubernetesVersion)) {
      throw usageError(
        `--kubernetes-version "${input.kubernetesVersion}" is not a version`,
        'give a Kubernetes version such as v1.32.4',
      );
    }
    choices.push({ field: 'kubernetesVersion', value: kubernetesVersion, origin: 'flag', note: 'as given' });
  } else if (clusterKubernetesVersion !== undefined) {
    kubernetesVersion = normalizeKubernetesVersion(clusterKubernetesVersion);
    choices.push({
      field: 'kubernetesVersion',
      value: kubernetesVersion,
      origin: 'cluster',
      note: "default: the cluster's current version (fact cluster.kubernetesVersion)",
    });
  } else {
    choices.push({
      field: 'kubernetesVersion',
      value: undefined,
      origin: 'default',
      note: "unknown: the cluster's version could not be derived; pass --kubernetes-version",
    });
  }

  const kubeprism = input.kubeprism ?? TARGET_DEFAULTS.kubeprism;
  choices.push({
    field: 'kubeprism',
    value: kubeprism,
    origin: input.kubeprism === undefined ? 'default' : 'flag',
    note: input.kubeprism === undefined ? 'default: Talos generates KubePrism enabled' : 'as given',
  });
  const provisioner = input.provisioner ?? TARGET_DEFAULTS.provisioner;
  choices.push({
    field: 'provisioner',
    value: provisioner,
    origin: input.provisioner === undefined ? 'default' : 'flag',
    note: input.provisioner === undefined ? 'default: the operator boots each node, ferry waits' : 'as given',
  });
  const infra = input.infra ?? TARGET_DEFAULTS.infra;
  choices.push({
    field: 'infra',
    value: infra,
    origin: input.infra === undefined ? 'default' : 'flag',
    note: input.infra === undefined ? 'default: no infrastructure-specific behaviour' : 'as given',
  });

  return { talosVersion: talos.version, talos, kubernetesVersion, kubeprism, provisioner, infra, choices };
}

/** True when a Kubernetes version is inside a Talos release's supported window (talos.md §8). */
export function kubernetesInTalosWindow(release: TalosRelease, kubernetesVersion: string): boolean {
  const v = parseVersion(kubernetesVersion);
  const min = parseVersion(release.kubernetesMin);
  const max = parseVersion(release.kubernetesMaxMinor);
  if (!v || !min || !max) return false;
  if (compareVersions(v, min) < 0) return false;
  return compareMinor(v, max) <= 0;
}

// ---------------------------------------------------------------------------------------------
// Command-line flags shared by every command that takes a target (facts, audit, generate, plan).

export const TARGET_FLAG_OPTIONS = {
  'talos-version': { type: 'string' },
  'kubernetes-version': { type: 'string' },
  kubeprism: { type: 'string' },
  provisioner: { type: 'string' },
  infra: { type: 'string' },
} as const;

export const TARGET_FLAGS_USAGE = `target flags (defaults are printed with the result):
  --talos-version V        Talos release to migrate to (default ${DEFAULT_TALOS_VERSION}; lines ${SUPPORTED_TALOS_MINORS.map((m) => `v${m}`).join(', ')}:
                           vX.Y = its newest tabled release; an untabled vX.Y.Z assumes the tabled patch below)
  --kubernetes-version V   Kubernetes version on Talos (default: the cluster's current version)
  --kubeprism on|off       KubePrism on Talos nodes (default on)
  --provisioner P          manual|exec|capi (default manual)
  --infra I                generic|proxmox|vsphere (default generic)`;

function pick<T extends string>(flag: string, value: unknown, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw usageError(`--${flag} must be one of ${allowed.join(', ')}; got "${String(value)}"`);
}

/** TargetInput from parsed flag values (node:util parseArgs `values`). */
export function targetInputFromFlags(values: Record<string, unknown>): TargetInput {
  const input: TargetInput = {};
  const talos = values['talos-version'];
  if (typeof talos === 'string') input.talosVersion = talos;
  const k8s = values['kubernetes-version'];
  if (typeof k8s === 'string') input.kubernetesVersion = k8s;
  const kubeprism = pick('kubeprism', values['kubeprism'], KUBEPRISM_MODES);
  if (kubeprism) input.kubeprism = kubeprism;
  const provisioner = pick('provisioner', values['provisioner'], PROVISIONERS);
  if (provisioner) input.provisioner = provisioner;
  const infra = pick('infra', values['infra'], INFRAS);
  if (infra) input.infra = infra;
  return input;
}
