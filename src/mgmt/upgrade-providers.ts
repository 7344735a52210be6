/**
 * `ferry mgmt upgrade-providers`: reads the clusterctl inventory and the Clusters through kubectl,
 * plans (upgrade-plan.ts), and with `yes` takes a fresh backup (the function the CLI hands in:
 * `ferry mgmt backup`'s), runs one pinned `clusterctl upgrade apply`, and verifies: every provider
 * at its target, every controller Deployment Available, every Cluster still there, unchanged and
 * not paused. Stages are journaled in the state directory, so a run that stopped after its
 * backup continues with the upgrade instead of backing up again.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FerryError } from '../errors.js';
import type { MgmtConfig } from './bootstrap/config.js';
import {
  buildStages,
  type Cmd,
  clusterctlEnv,
  clusterctlYamlFor,
  pinProvider,
  renderCmd,
  statePaths,
  vsphereVariables,
} from './bootstrap/stages.js';
import { StageJournal } from './stage-journal.js';
import { type Tools, toolFailed } from './tools/adapter.js';
import {
  type InstalledProvider,
  type ProviderKey,
  planProviderUpgrade,
  type UpgradePlan,
  upgradeApplyArgs,
} from './upgrade-plan.js';

export const UPGRADE_STAGES = ['backup', 'upgrade-apply', 'verify'] as const;
export type UpgradeStage = (typeof UPGRADE_STAGES)[number];

export interface UpgradeOptions {
  config: MgmtConfig;
  kubeconfig: string;
  targets: Partial<Record<ProviderKey, string>>;
  stateDir: string;
  tools: Tools;
  mode: 'dry-run' | 'yes';
  providerTimeoutSeconds: number;
  /** A fresh backup of the management cluster; what it reports is printed. */
  backup: () => Promise<string>;
  progress: (line: string) => void;
}

export type UpgradeOutcome =
  | { kind: 'planned'; via: Via; plan: UpgradePlan; commands: string[] }
  | { kind: 'up-to-date'; via: Via; plan: UpgradePlan }
  | { kind: 'upgraded'; via: Via; plan: UpgradePlan; backup: string; verified: string[] };

/** What mgmt.yaml pins, by --to key; --to wins. */
export function wantedVersions(
  c: MgmtConfig,
  to: Partial<Record<ProviderKey, string>>,
): Partial<Record<ProviderKey, string>> {
  const p = c.providers;
  return {
    core: p.core,
    'talos-bootstrap': p.bootstrapTalos,
    'talos-cp': p.controlPlaneTalos,
    [c.infrastructure.kind]: p.infrastructure,
    ipam: p.ipamInCluster,
    ...to,
  };
}

interface ClusterSeen {
  id: string;
  uid: string;
  generation: number;
  paused: boolean;
}

async function kubectlJson(tools: Tools, kubeconfig: string, args: string[], what: string) {
  const r = await tools.ok(
    { tool: 'kubectl', args: ['--kubeconfig', kubeconfig, ...args, '-o', 'json'] },
    what,
    'check --mgmt-kubeconfig (the management cluster, cluster-admin) and run the command again',
  );
  return (JSON.parse(r.stdout) as { items?: Record<string, unknown>[] }).items ?? [];
}

type Obj = {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    annotations?: Record<string, string>;
  };
  spec?: { paused?: boolean };
  status?: { conditions?: { type?: string; status?: string }[] };
} & Record<string, unknown>;

async function inventory(tools: Tools, kubeconfig: string): Promise<InstalledProvider[]> {
  const call = {
    tool: 'kubectl' as const,
    args: [
      '--kubeconfig',
      kubeconfig,
      'get',
      'providers.clusterctl.cluster.x-k8s.io',
      '--all-namespaces',
      '-o',
      'json',
    ],
  };
  const r = await tools.run(call);
  // No inventory CRD at all: the operator installed the providers (it writes none).
  if (r.code !== 0 && /doesn't have a resource type|NotFound|no matches for kind/.test(r.stderr)) return [];
  if (r.code !== 0)
    throw toolFailed(
      call,
      r,
      'cannot read the clusterctl inventory of the management cluster',
      'check --mgmt-kubeconfig (the management cluster, cluster-admin) and run the command again',
      tools.secrets,
    );
  const items = ((JSON.parse(r.stdout) as { items?: Obj[] }).items ?? []) as Obj[];
  return items.map((i) => ({
    type: String(i['type']),
    providerName: String(i['providerName']),
    version: String(i['version']),
    namespace: i.metadata?.namespace ?? '',
  }));
}

/** The Cluster API operator's provider kinds and the clusterctl type each stands for. */
const OPERATOR_KINDS: Record<string, string> = {
  CoreProvider: 'coreproviders',
  BootstrapProvider: 'bootstrapproviders',
  ControlPlaneProvider: 'controlplaneproviders',
  InfrastructureProvider: 'infrastructureproviders',
  IPAMProvider: 'ipamproviders',
};

/** Providers the operator installed: kind = clusterctl type, name = provider name, the version it reports installed. */
async function operatorProviders(tools: Tools, kubeconfig: string): Promise<InstalledProvider[]> {
  const kinds = Object.values(OPERATOR_KINDS)
    .map((k) => `${k}.operator.cluster.x-k8s.io`)
    .join(',');
  const r = await tools.run({
    tool: 'kubectl',
    args: ['--kubeconfig', kubeconfig, 'get', kinds, '--all-namespaces', '-o', 'json'],
  });
  if (r.code !== 0) return [];
  const items = ((JSON.parse(r.stdout) as { items?: Obj[] }).items ?? []) as (Obj & {
    kind?: string;
    spec?: { version?: string };
    status?: { installedVersion?: string };
  })[];
  return items.map((i) => ({
    type: String(i.kind),
    providerName: i.metadata?.name ?? '',
    version: i.status?.installedVersion ?? i.spec?.version ?? '',
    namespace: i.metadata?.namespace ?? '',
  }));
}

/** Where the providers were installed from, and so how they are upgraded. */
type Via = 'clusterctl' | 'operator';

async function installedProviders(
  tools: Tools,
  kubeconfig: string,
  via?: Via,
): Promise<{ via: Via; installed: InstalledProvider[] }> {
  if (via !== 'operator') {
    const inv = await inventory(tools, kubeconfig);
    if (inv.length > 0 || via === 'clusterctl') return { via: 'clusterctl', installed: inv };
  }
  return { via: 'operator', installed: await operatorProviders(tools, kubeconfig) };
}

async function clustersSeen(tools: Tools, kubeconfig: string): Promise<ClusterSeen[]> {
  const items = (await kubectlJson(
    tools,
    kubeconfig,
    ['get', 'clusters.cluster.x-k8s.io', '--all-namespaces'],
    'cannot list the Clusters of the management cluster',
  )) as Obj[];
  return items.map((c) => ({
    id: `${c.metadata?.namespace}/${c.metadata?.name}`,
    uid: c.metadata?.uid ?? '',
    generation: c.metadata?.generation ?? 0,
    paused: c.spec?.paused === true || c.metadata?.annotations?.['cluster.x-k8s.io/paused'] !== undefined,
  }));
}

/** Problems after the upgrade; empty when it holds. */
export function verifyUpgrade(
  plan: UpgradePlan,
  after: { inventory: InstalledProvider[]; deployments: Obj[]; clusters: ClusterSeen[] },
  before: ClusterSeen[],
): string[] {
  const out: string[] = [];
  for (const s of plan.steps) {
    const now = after.inventory.find((i) => i.type === s.type && i.providerName === s.name);
    if (now?.version !== s.target)
      out.push(`${s.key} is at ${now?.version ?? 'nothing (not in the inventory)'}, not ${s.target}`);
  }
  if (after.deployments.length === 0)
    out.push('no controller Deployment (label cluster.x-k8s.io/provider) was found');
  for (const d of after.deployments)
    if (!d.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True'))
      out.push(`Deployment ${d.metadata?.namespace}/${d.metadata?.name} is not Available`);
  for (const b of before) {
    const a = after.clusters.find((c) => c.id === b.id);
    if (!a || a.uid !== b.uid) out.push(`Cluster ${b.id} is gone`);
    else if (a.generation !== b.generation)
      out.push(`Cluster ${b.id} changed during the upgrade (generation ${b.generation} → ${a.generation})`);
    else if (a.paused) out.push(`Cluster ${b.id} is paused`);
  }
  for (const a of after.clusters)
    if (!before.some((b) => b.id === a.id)) out.push(`Cluster ${a.id} appeared during the upgrade`);
  return out;
}

export async function upgradeProviders(o: UpgradeOptions): Promise<UpgradeOutcome> {
  const { tools, kubeconfig } = o;
  const wanted = wantedVersions(o.config, o.targets);
  await tools.version('kubectl');
  const { via, installed } = await installedProviders(tools, kubeconfig);
  if (installed.length === 0)
    throw new FerryError(
      'input',
      `the management cluster behind ${kubeconfig} has no Cluster API provider: no clusterctl inventory and no Cluster API operator provider`,
      { remediation: 'check --mgmt-kubeconfig: it must name the management cluster' },
    );
  const plan = planProviderUpgrade(installed, wanted);
  if (via === 'operator') operatorCovers(o.config, plan);
  const config = join(o.stateDir, 'upgrade-clusterctl.yaml');
  const xdg = join(o.stateDir, 'xdg');
  const applyCmds: Cmd[] =
    via === 'clusterctl'
      ? [
          {
            tool: 'clusterctl',
            args: upgradeApplyArgs(plan, { kubeconfig, config, timeoutSeconds: o.providerTimeoutSeconds }),
            env: clusterctlEnv(xdg),
          },
        ]
      : operatorCommands(o.config, plan, kubeconfig, o.stateDir, o.providerTimeoutSeconds);
  // One journal per target set: a run that stopped is continued by the same command, and a
  // different --to or mgmt.yaml starts afresh instead of skipping a backup it never took.
  const digest = createHash('sha256')
    .update(JSON.stringify(Object.entries(wanted).sort()))
    .digest('hex');
  const journalPath = join(o.stateDir, `upgrade-${digest.slice(0, 12)}.journal.sqlite`);
  const resuming =
    existsSync(journalPath) && StageJournal.read(journalPath).events.some((e) => e.stage === 'backup');
  const finished =
    resuming && StageJournal.read(journalPath).events.some((e) => e.stage === 'verify' && e.state === 'done');
  if (plan.upToDate && plan.blockers.length === 0 && (!resuming || finished))
    return { kind: 'up-to-date', via, plan };
  if (o.mode === 'dry-run')
    return {
      kind: 'planned',
      via,
      plan,
      commands: ['ferry mgmt backup (fresh)', ...applyCmds.map(renderCmd)],
    };
  if (plan.blockers.length > 0)
    throw new FerryError(
      'input',
      `the provider upgrade is blocked (${plan.blockers.length}); nothing was changed`,
      {
        remediation: 'run it with --dry-run to see each blocker and its fix',
      },
    );
  if (via === 'operator') await tools.version('helm');
  const cc = via === 'clusterctl' ? await tools.version('clusterctl') : undefined;
  const core = plan.steps.find((s) => s.key === 'core')!;
  const [major, minor] = core.target.replace(/^v/, '').split('.').map(Number);
  if (cc && (cc.major !== major || cc.minor !== minor))
    throw new FerryError(
      'input',
      `clusterctl ${cc.major}.${cc.minor}.${cc.patch} does not match the target core ${core.target}`,
      {
        remediation: `install clusterctl ${core.target} (the same minor as the core provider it upgrades to)`,
      },
    );

  mkdirSync(o.stateDir, { recursive: true, mode: 0o700 });
  const journal = StageJournal.open<UpgradeStage>(journalPath, digest);
  try {
    const done = journal.lastStates();
    const stage = async <T>(k: UpgradeStage, work: () => Promise<T>): Promise<T | undefined> => {
      if (done.get(k) === 'done') {
        o.progress(`${k}: done by an earlier run`);
        return undefined;
      }
      journal.record(k, 'started');
      try {
        const r = await work();
        journal.record(k, 'done');
        return r;
      } catch (e) {
        journal.record(k, 'failed', e instanceof Error ? e.message : String(e));
        throw e;
      }
    };
    const before = await clustersSeen(tools, kubeconfig);
    const backup = (await stage('backup', o.backup)) ?? 'taken by an earlier run';
    await stage('upgrade-apply', async () => {
      // Resumed after clusterctl had upgraded them all: nothing is left to pin.
      if (plan.upToDate) return;
      if (via === 'operator') {
        for (const c of applyCmds) {
          o.progress(
            c.tool === 'helm'
              ? `helm ${c.args.slice(0, 5).join(' ')} … -f - (values: the versions above)`
              : renderCmd(c),
          );
          await tools.ok(
            { tool: c.tool, args: c.args, ...(typeof c.stdin === 'string' && { stdin: c.stdin }) },
            'the Cluster API operator did not upgrade the providers',
            'the backup above holds the management cluster as it was; read the error, fix it and run the same command again (the backup is not taken twice)',
          );
        }
        return;
      }
      const [apply] = applyCmds as [Cmd];
      const pins = plan.steps.map((s) => pinProvider(s.type, s.name, s.target)!);
      writeFileSync(
        config,
        clusterctlYamlFor(pins, {
          origin: `ferry mgmt upgrade-providers from ${o.config.file}`,
          certManager: o.config.certManager.version,
          imageRepository: o.config.imageRepository,
          variables: vsphereVariables(o.config),
        }),
        { mode: 0o600 },
      );
      o.progress(renderCmd(apply));
      await tools.ok(
        { tool: apply.tool, args: apply.args, ...(apply.env && { env: apply.env }) },
        'clusterctl upgrade apply failed',
        "the backup above holds the management cluster as it was; read clusterctl's error, fix it and run the same command again (the backup is not taken twice)",
      );
    });
    const verified = (await stage('verify', async () => {
      const after = {
        inventory: (await installedProviders(tools, kubeconfig, via)).installed,
        deployments: (await kubectlJson(
          tools,
          kubeconfig,
          ['get', 'deployments', '--all-namespaces', '-l', 'cluster.x-k8s.io/provider'],
          'cannot list the controller Deployments',
        )) as Obj[],
        clusters: await clustersSeen(tools, kubeconfig),
      };
      const problems = verifyUpgrade(plan, after, before);
      if (problems.length > 0)
        throw new FerryError('gate', `the providers were upgraded, but: ${problems.join('; ')}`, {
          remediation:
            'look at the controllers (kubectl get deployments -A -l cluster.x-k8s.io/provider) and the Clusters; run the same command again to verify again once they settle',
        });
      return plan.steps
        .map((s) => `${s.key} ${s.target}`)
        .concat(`${before.length} Cluster(s) unchanged, none paused`);
    })) ?? ['verified by an earlier run'];
    return { kind: 'upgraded', via, plan, backup, verified };
  } finally {
    journal.close();
  }
}

/**
 * The operator's chart holds every provider it installs: its values are mgmt.yaml's, so a provider
 * installed that mgmt.yaml does not pin would be dropped from them. Refused before anything runs.
 */
function operatorCovers(c: MgmtConfig, plan: UpgradePlan): void {
  const pinned = new Set(['core', 'talos-bootstrap', 'talos-cp', c.infrastructure.kind, 'ipam']);
  const extra = plan.steps.filter((s) => !pinned.has(s.key)).map((s) => `${s.type} ${s.name}`);
  if (extra.length > 0)
    throw new FerryError(
      'input',
      `the Cluster API operator also runs ${extra.join(', ')}, which ${c.file} does not pin: the chart's values would leave it out`,
      {
        location: { file: c.file, field: 'providers' },
        remediation:
          'upgrade it through the operator yourself, or use the mgmt.yaml this cluster was built from',
      },
    );
}

/**
 * Through the operator: the capi-operator stage of bootstrap (helm upgrade of the chart, values on
 * stdin, then a wait for every provider kind) with mgmt.yaml's providers set to the targets.
 */
function operatorCommands(
  c: MgmtConfig,
  plan: UpgradePlan,
  kubeconfig: string,
  stateDir: string,
  timeout: number,
): Cmd[] {
  const at = (k: ProviderKey, dflt: string) => plan.steps.find((s) => s.key === k)?.target ?? dflt;
  const p = c.providers;
  const target: MgmtConfig = {
    ...c,
    providers: {
      core: at('core', p.core),
      bootstrapTalos: at('talos-bootstrap', p.bootstrapTalos),
      controlPlaneTalos: at('talos-cp', p.controlPlaneTalos),
      infrastructure: at(c.infrastructure.kind, p.infrastructure),
      ipamInCluster: at('ipam', p.ipamInCluster),
    },
  };
  const stage = buildStages(target, statePaths(stateDir, c.cluster.name), {
    waitTimeoutSeconds: timeout,
    providerTimeoutSeconds: timeout,
  }).find((s) => s.kind === 'capi-operator')!;
  // The stage names bootstrap's kubeconfig; the command's may be another.
  return stage.commands.map((cmd) => {
    const args = [...cmd.args];
    const i = args.indexOf('--kubeconfig');
    if (i >= 0) args[i + 1] = kubeconfig;
    return { ...cmd, args };
  });
}
