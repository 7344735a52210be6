import { resolve } from 'node:path';
import { type ExitCode, usageError } from '../errors.js';
import type { UpgradeTarget } from '../upgrade/model.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';

const usage = `usage: ferry upgrade plan --mgmt-kubeconfig FILE --cluster NAMESPACE/NAME (--kubernetes vX.Y.Z | --talos vA.B.C)
                          [--template-id ID[,ID…]] [--surge-replicas] [--snapshot DIR | --kubeconfig FILE]
                          [--manifests DIR] [-o plan.json|plan.md|plan.html]

Plans a Kubernetes or Talos upgrade of a cluster Cluster API manages (a TalosControlPlane and
MachineDeployments), from the management cluster's objects and, with --snapshot or --kubeconfig,
the workload cluster's. Nothing is changed. The plan checks that the jump is allowed (Kubernetes
one minor per stage: a skip becomes consecutive stages; Talos through the latest patch of every
minor; the Talos line's Kubernetes window; the kubelets left behind within the skew policy; no
downgrade), what would break (objects through API versions the target removes, in the workload
cluster and in --manifests; PodDisruptionBudgets that would hold a pool's drains forever), and
lists what to write in order: new machine templates (immutable: a new, derived name), the
TalosControlPlane, then each MachineDeployment, one pool at a time, with maxSurge and
maxUnavailable from the pool's budgets; and the expected duration of each stage.

  --mgmt-kubeconfig FILE   the management cluster's kubeconfig; --mgmt-context NAME
  --cluster NS/NAME        the Cluster to upgrade
  --kubernetes vX.Y.Z      target Kubernetes release
  --talos vA.B.C           target Talos release (or vA.B: the newest ferry tables)
  --template-id ID[,ID…]   the new Talos image's template, one per Talos stage: Proxmox its VM id,
                           vSphere its VM template name
  --surge-replicas         a workload whose budget allows no disruption is scaled up by one around
                           its pool's roll (the plan lists the scale-ups), instead of a blocker
  --snapshot DIR           the workload cluster as a snapshot (ferry snapshot)
  --kubeconfig FILE        the workload cluster, read live; --context NAME
  --manifests DIR          YAML/JSON manifests to scan for removed API versions (the kit, GitOps sources)
  -o, --output FILE        plan.json | plan.md | plan.html (format from the extension; default: md on stdout)

Exit codes: 0 plan written; 1 refused: a blocker the operator can fix and plan again (a removed
API in use, a budget that allows no disruption, a missing --template-id, a version outside the
Talos window or the kubelet skew); nothing is written; 2 bad usage or input, or a cluster that
must not be upgraded now (not under Cluster API, paused, an upgrade in progress, a downgrade, a
Talos line ferry does not know, a template id already in use, a list the server refused);
4 internal error.
`;

const options = {
  'mgmt-kubeconfig': { type: 'string' },
  'mgmt-context': { type: 'string' },
  cluster: { type: 'string' },
  kubernetes: { type: 'string' },
  talos: { type: 'string' },
  'template-id': { type: 'string' },
  'surge-replicas': { type: 'boolean' },
  snapshot: { type: 'string' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  manifests: { type: 'string' },
  output: { type: 'string', short: 'o' },
} as const;

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function clusterOf(text: string | undefined): { namespace: string; name: string } {
  const m = (text ?? '').split('/');
  if (text === undefined || m.length !== 2 || !NAME.test(m[0]!) || !NAME.test(m[1]!))
    throw usageError(
      text === undefined ? 'missing --cluster' : `--cluster "${text}" is not NAMESPACE/NAME`,
      'pass the Cluster as NAMESPACE/NAME (`kubectl --kubeconfig MGMT get clusters -A`)',
    );
  return { namespace: m[0]!, name: m[1]! };
}

async function targetOf(values: { kubernetes?: string; talos?: string }): Promise<UpgradeTarget> {
  const { kubernetes, talos } = values;
  if ((kubernetes === undefined) === (talos === undefined))
    throw usageError(
      'pass exactly one of --kubernetes vX.Y.Z and --talos vA.B.C',
      'one upgrade at a time: Kubernetes or Talos',
    );
  if (kubernetes !== undefined) {
    const { parseKubernetesTarget } = await import('../upgrade/versions.js');
    if (!parseKubernetesTarget(kubernetes))
      throw usageError(
        `--kubernetes "${kubernetes}" is not a Kubernetes release (vX.Y.Z)`,
        'give a released version such as v1.33.2 (https://kubernetes.io/releases/)',
      );
    return { kind: 'kubernetes', version: kubernetes.startsWith('v') ? kubernetes : `v${kubernetes}` };
  }
  const { lookupTalosRelease } = await import('../knowledge/talos.js');
  const r = lookupTalosRelease(talos!);
  if (r.kind === 'refused')
    throw usageError(
      `--talos "${talos}" ${r.problem}`,
      'give a Talos release ferry tables, e.g. v1.13.9 (or a line, v1.13)',
    );
  return { kind: 'talos', version: r.release.version };
}

function templateIds(text: string | undefined): string[] {
  if (text === undefined) return [];
  const ids = text.split(',').map((s) => s.trim());
  for (const id of ids)
    if (!/^[^\s,]+$/.test(id))
      throw usageError(
        `--template-id "${id}" is not a template id`,
        'pass the template of each Talos stage (Proxmox: its VM id; vSphere: its name), comma separated in stage order',
      );
  return ids;
}

async function planCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, options, usage);
  if (positionals.length > 0)
    throw usageError(`unexpected argument "${positionals[0]}"`, `see usage:\n${usage.trim()}`);
  const path = (p: string) => resolve(io.cwd, p);
  const mgmtFile = values['mgmt-kubeconfig'];
  if (mgmtFile === undefined || mgmtFile === '')
    throw usageError('missing --mgmt-kubeconfig', "pass the Cluster API management cluster's kubeconfig");
  const cluster = clusterOf(values.cluster);
  const target = await targetOf(values);
  const ids = templateIds(values['template-id']);
  if (values.snapshot !== undefined && values.kubeconfig !== undefined)
    throw usageError(
      'pass --snapshot or --kubeconfig, not both',
      'the workload cluster comes from one place',
    );
  const { upgradeFormatFor, renderUpgradePlan } = await import('../upgrade/render.js');
  const format = values.output === undefined ? 'md' : upgradeFormatFor(values.output);
  if (format === undefined)
    throw usageError(
      `--output "${values.output}": the format comes from the extension`,
      'name the file plan.json, plan.md or plan.html',
    );

  // Bad input first, before anything is read over the network.
  let manifests: Awaited<ReturnType<typeof import('./upgrade-manifests.js')['readManifests']>> = [];
  if (values.manifests !== undefined) {
    const { readManifests } = await import('./upgrade-manifests.js');
    manifests = await readManifests(path(values.manifests), values.manifests);
  }
  const { loadSnapshot } = await import('../snapshot/load.js');
  let workload =
    values.snapshot !== undefined ? await loadSnapshot(path(values.snapshot), { strictPki: false }) : null;
  const { readMgmtFromKubeconfig } = await import('../adapters/capi/mgmt-reader.js');
  const mgmt = await readMgmtFromKubeconfig(path(mgmtFile), values['mgmt-context']);
  if (values.kubeconfig !== undefined) {
    const { collectLive } = await import('./live.js');
    const live = await collectLive(
      values.kubeconfig,
      { kubeconfig: values.kubeconfig, ...(values.context !== undefined && { context: values.context }) },
      io,
      { strictPki: false },
    );
    workload = live.snapshot;
  }

  const { buildUpgradePlan } = await import('../upgrade/plan.js');
  const plan = buildUpgradePlan({
    cluster,
    mgmt,
    workload,
    manifests,
    target,
    templateIds: ids,
    surgeReplicas: values['surge-replicas'] === true,
  });
  for (const w of plan.warnings) io.stderr(`warning: ${w}\n`);
  if (plan.blockers.length > 0) {
    const { blockerExit, describeBlocker } = await import('../upgrade/blockers.js');
    io.stderr(`ferry upgrade plan refuses: ${plan.blockers.length} blocker(s); no plan written\n`);
    for (const b of plan.blockers) {
      const t = describeBlocker(b);
      io.stderr(
        `  blocker ${b.kind}: ${t.title}: ${t.detail}\n    fix: ${t.remediation.split('\n').join('\n         ')}\n`,
      );
    }
    return Math.max(...plan.blockers.map(blockerExit)) as ExitCode;
  }
  const text = renderUpgradePlan(plan, format);
  if (values.output === undefined) {
    io.stdout(text);
    return 0;
  }
  const { writeFileAtomic } = await import('../util/atomic-write.js');
  await writeFileAtomic(path(values.output), text, { origin: { flag: '--output', shown: values.output } });
  const writes = plan.stages.reduce((n, s) => n + s.writes.filter((w) => w.kind !== 'wait').length, 0);
  io.stdout(
    `${format} upgrade plan written to ${values.output}: Cluster ${plan.cluster} to ${target.kind === 'kubernetes' ? 'Kubernetes' : 'Talos'} ${target.version} in ${plan.stages.length} stage(s), ${writes} write(s), about ${Math.round(plan.seconds / 60)} min\n`,
  );
  return 0;
}

export const command: Command = {
  name: 'upgrade',
  summary: 'plan a Kubernetes or Talos upgrade of a cluster Cluster API manages (upgrade plan)',
  usage,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    switch (sub) {
      case 'plan':
        return planCommand(rest, io);
      default:
        throw usageError(
          sub === undefined
            ? 'missing subcommand'
            : `unknown subcommand "${sub}" (ferry upgrade plan; upgrade run is not built yet)`,
          `see usage:\n${usage.trim()}`,
        );
    }
  },
};
