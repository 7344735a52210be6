/**
 * The plan of `ferry mgmt upgrade-providers`, pure: from the providers installed (the clusterctl
 * inventory's Provider objects) and the versions wanted (mgmt.yaml's pins, overridden by --to),
 * each provider's step with the contract both releases declare and the release notes to read,
 * the blockers, and the one pinned `clusterctl upgrade apply` that performs it.
 */
import {
  type Contract,
  compatibleContracts,
  contractOf,
  type ProviderFacts,
  type ProviderType,
  providerFacts,
  releaseNotesUrl,
  UNSAFE_LINES,
} from '../knowledge/capi-providers.js';
import { compareVersionText, parseVersion } from '../util/semver.js';

/** How `--to` names a provider. */
export const PROVIDER_KEYS = ['core', 'talos-bootstrap', 'talos-cp', 'proxmox', 'vsphere', 'ipam'] as const;
export type ProviderKey = (typeof PROVIDER_KEYS)[number];

const KEY_OF: Record<ProviderKey, { type: ProviderType; name: string }> = {
  core: { type: 'CoreProvider', name: 'cluster-api' },
  'talos-bootstrap': { type: 'BootstrapProvider', name: 'talos' },
  'talos-cp': { type: 'ControlPlaneProvider', name: 'talos' },
  proxmox: { type: 'InfrastructureProvider', name: 'proxmox' },
  vsphere: { type: 'InfrastructureProvider', name: 'vsphere' },
  ipam: { type: 'IPAMProvider', name: 'in-cluster' },
};

export const providerOfKey = (k: ProviderKey) => KEY_OF[k];

export function keyOf(type: string, name: string): ProviderKey | undefined {
  return PROVIDER_KEYS.find((k) => KEY_OF[k].type === type && KEY_OF[k].name === name);
}

/** One entry of the clusterctl inventory. */
export interface InstalledProvider {
  type: string;
  providerName: string;
  version: string;
  namespace: string;
}

export type Change = 'upgrade' | 'unchanged' | 'downgrade';

export interface ProviderStep {
  key: ProviderKey;
  type: ProviderType;
  name: string;
  namespace: string;
  current: string;
  target: string;
  change: Change;
  /** undefined: a release series ferry has no record of (a blocker). */
  currentContract: Contract | undefined;
  targetContract: Contract | undefined;
  /** The target's release page; empty when nothing changes. */
  releaseNotes: string[];
}

export type Blocker =
  | { kind: 'unknown-provider'; type: string; name: string; version: string }
  | { kind: 'not-installed'; key: ProviderKey; target: string }
  | { kind: 'bad-version'; key: ProviderKey; version: string }
  | { kind: 'downgrade'; key: ProviderKey; current: string; target: string }
  | { kind: 'unknown-contract'; key: ProviderKey; version: string }
  | {
      kind: 'contract';
      key: ProviderKey;
      version: string;
      contract: Contract;
      core: string;
      coreContract: Contract;
    }
  | { kind: 'unsafe-line'; key: ProviderKey; version: string; below: string; why: string; link: string };

export interface UpgradePlan {
  steps: ProviderStep[];
  blockers: Blocker[];
  /** Nothing to do: every provider is at its target. */
  upToDate: boolean;
}

/** `--to core=v1.14.1,talos-cp=v0.5.14`: what it sets, or the problem with it. */
export function parseTargets(
  text: string,
): { kind: 'ok'; targets: Partial<Record<ProviderKey, string>> } | { kind: 'bad'; problem: string } {
  const targets: Partial<Record<ProviderKey, string>> = {};
  for (const part of text.split(',').map((p) => p.trim())) {
    const m = /^([a-z-]+)=(\S+)$/.exec(part);
    if (!m) return { kind: 'bad', problem: `"${part}" is not KEY=VERSION` };
    const key = m[1] as ProviderKey;
    if (!PROVIDER_KEYS.includes(key))
      return { kind: 'bad', problem: `"${m[1]}" names no provider (one of ${PROVIDER_KEYS.join(', ')})` };
    if (targets[key] !== undefined) return { kind: 'bad', problem: `${key} is given twice` };
    if (!/^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(m[2]!))
      return { kind: 'bad', problem: `${key}: "${m[2]}" is not a release tag (e.g. v1.14.1)` };
    targets[key] = m[2]!;
  }
  return { kind: 'ok', targets };
}

function change(current: string, target: string): Change {
  const c = compareVersionText(target, current);
  return c > 0 ? 'upgrade' : c < 0 ? 'downgrade' : 'unchanged';
}

/**
 * The plan. `wanted` holds a version for every provider that should end up installed (mgmt.yaml's
 * pins with --to applied); an installed provider it does not name stays as it is.
 */
export function planProviderUpgrade(
  installed: readonly InstalledProvider[],
  wanted: Partial<Record<ProviderKey, string>>,
): UpgradePlan {
  const blockers: Blocker[] = [];
  const steps: ProviderStep[] = [];
  const facts = new Map<ProviderKey, ProviderFacts>();
  for (const p of installed) {
    const key = keyOf(p.type, p.providerName);
    const f = providerFacts(p.type, p.providerName);
    if (!key || !f) {
      blockers.push({ kind: 'unknown-provider', type: p.type, name: p.providerName, version: p.version });
      continue;
    }
    facts.set(key, f);
    const target = wanted[key] ?? p.version;
    if (!parseVersion(target)) blockers.push({ kind: 'bad-version', key, version: target });
    const ch = change(p.version, target);
    steps.push({
      key,
      type: f.type,
      name: f.name,
      namespace: p.namespace,
      current: p.version,
      target,
      change: ch,
      currentContract: contractOf(f, p.version),
      targetContract: contractOf(f, target),
      releaseNotes: ch === 'unchanged' ? [] : [releaseNotesUrl(f, target)],
    });
    if (ch === 'downgrade') blockers.push({ kind: 'downgrade', key, current: p.version, target });
  }
  for (const k of PROVIDER_KEYS) {
    const t = wanted[k];
    if (t !== undefined && !steps.some((s) => s.key === k))
      blockers.push({ kind: 'not-installed', key: k, target: t });
  }
  for (const s of steps) {
    if (s.targetContract === undefined)
      blockers.push({ kind: 'unknown-contract', key: s.key, version: s.target });
    for (const u of UNSAFE_LINES)
      if (u.type === s.type && u.name === s.name && compareVersionText(s.target, u.below) < 0)
        blockers.push({
          kind: 'unsafe-line',
          key: s.key,
          version: s.target,
          below: u.below,
          why: u.why,
          link: u.link,
        });
  }
  const core = steps.find((s) => s.key === 'core');
  if (core?.targetContract)
    for (const s of steps)
      if (
        s !== core &&
        s.targetContract &&
        !compatibleContracts(core.targetContract).includes(s.targetContract)
      )
        blockers.push({
          kind: 'contract',
          key: s.key,
          version: s.target,
          contract: s.targetContract,
          core: core.target,
          coreContract: core.targetContract,
        });
  return { steps, blockers, upToDate: steps.every((s) => s.change === 'unchanged') };
}

/** What a blocker says, and how to get past it. */
export function describeBlocker(b: Blocker): { message: string; fix: string } {
  switch (b.kind) {
    case 'unknown-provider':
      return {
        message: `${b.type} ${b.name} ${b.version} is installed, and ferry knows neither its releases nor its contracts`,
        fix: 'upgrade it yourself (clusterctl upgrade plan shows its releases), or remove it; ferry plans only the providers it installs',
      };
    case 'not-installed':
      return {
        message: `${b.key} ${b.target} is asked for, but the management cluster has no such provider`,
        fix: `drop ${b.key} from --to (or from mgmt.yaml): clusterctl upgrade does not install providers`,
      };
    case 'bad-version':
      return { message: `${b.key}: "${b.version}" is not a release tag`, fix: 'write a tag such as v1.14.1' };
    case 'downgrade':
      return {
        message: `${b.key} would go from ${b.current} down to ${b.target}: clusterctl upgrade does not downgrade, and the objects stored at the newer API stay there`,
        fix: `keep ${b.key} at ${b.current} or newer (set it in mgmt.yaml or --to)`,
      };
    case 'unknown-contract': {
      const p = providerOfKey(b.key);
      const known = Object.keys(providerFacts(p.type, p.name)?.contracts ?? {});
      return {
        message: `${b.key} ${b.version}: ferry has no record of the Cluster API contract this release series declares`,
        fix: `pick a release series ferry knows (v${known[0]} to v${known.at(-1)}), or read that release's metadata.yaml and upgrade it yourself`,
      };
    }
    case 'contract':
      return {
        message: `${b.key} ${b.version} declares the ${b.contract} contract, which core Cluster API ${b.core} (${b.coreContract}) does not accept`,
        fix:
          b.contract === 'v1beta2'
            ? `upgrade core to a release of the v1beta2 contract (v1.11 or newer) in the same step`
            : `keep core on a release that still accepts v1beta1 providers, or wait for a ${b.key} release of the ${b.coreContract} contract`,
      };
    case 'unsafe-line':
      return {
        message: `${b.key} ${b.version} is older than ${b.below}: ${b.why} (${b.link})`,
        fix: `target ${b.key} ${b.below} or newer`,
      };
  }
}

/** The pinned `clusterctl upgrade apply` arguments: one NAME:VERSION flag per provider that changes; the others are not touched. */
export function upgradeApplyArgs(
  plan: UpgradePlan,
  o: { kubeconfig: string; config: string; timeoutSeconds: number },
): string[] {
  const flag: Record<ProviderType, string> = {
    CoreProvider: '--core',
    BootstrapProvider: '--bootstrap',
    ControlPlaneProvider: '--control-plane',
    InfrastructureProvider: '--infrastructure',
    IPAMProvider: '--ipam',
  };
  const order: ProviderType[] = [
    'CoreProvider',
    'BootstrapProvider',
    'ControlPlaneProvider',
    'InfrastructureProvider',
    'IPAMProvider',
  ];
  const pins = [...plan.steps]
    .filter((s) => s.change === 'upgrade')
    .sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type))
    .flatMap((s) => [flag[s.type], `${s.name}:${s.target}`]);
  return [
    'upgrade',
    'apply',
    '--kubeconfig',
    o.kubeconfig,
    '--config',
    o.config,
    ...pins,
    '--wait-providers',
    '--wait-provider-timeout',
    String(o.timeoutSeconds),
  ];
}

/** The plan as `--dry-run` prints it: one row per provider, then the blockers or the command. */
export function renderUpgradePlan(plan: UpgradePlan, commands: string[]): string {
  const rows = [
    ['PROVIDER', 'TYPE', 'CURRENT', 'TARGET', 'CHANGE', 'CONTRACT', 'RELEASE NOTES'],
    ...plan.steps.map((s) => [
      s.key,
      s.type,
      s.current,
      s.target,
      s.change,
      s.currentContract === s.targetContract
        ? (s.targetContract ?? '?')
        : `${s.currentContract ?? '?'} → ${s.targetContract ?? '?'}`,
      s.releaseNotes.join(' ') || '-',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const out = rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
  if (plan.blockers.length > 0) {
    out.push('', `blocked (${plan.blockers.length}):`);
    for (const b of plan.blockers) {
      const d = describeBlocker(b);
      out.push(`  - ${d.message}`, `    fix: ${d.fix}`);
    }
  } else if (plan.upToDate) out.push('', 'every provider is at its target: nothing to do');
  else out.push('', 'with --yes, ferry runs:', ...commands.map((c) => `  ${c}`));
  return `${out.join('\n')}\n`;
}
