import { dirname, join, resolve } from 'node:path';
import { type ExitCode, usageError } from '../errors.js';
import { noPositionals, oneOf, parseFlags } from './args.js';
import type { Io } from './io.js';
import { providerTimeoutSeconds, s3Flags } from './mgmt-flags.js';

export const upgradeUsage = `usage: ferry mgmt upgrade-providers --config mgmt.yaml (--dry-run | --yes --backup-to s3://BUCKET[/PREFIX]
                                   (--recipient age1… | --recipients-file FILE)... [S3 flags])
                                   [--mgmt-kubeconfig FILE] [--to KEY=VERSION,...] [--state-dir DIR]
                                   [--provider-timeout SEC] [-o table|json]

Plans, and with --yes performs, an upgrade of the Cluster API providers of the management cluster:
the versions installed (the clusterctl inventory, else the Cluster API operator's providers) against the versions mgmt.yaml pins, --to
overriding them (KEY: core, talos-bootstrap, talos-cp, proxmox, vsphere, ipam); the contract each
release declares and its release notes. Blocked by a downgrade, a provider or release series ferry
does not know, a contract the core does not accept, or a provider line ferry knows to be unsafe.
--yes: a fresh ferry mgmt backup to --backup-to, one pinned clusterctl upgrade apply (or the
operator chart's helm upgrade with the target versions), then checks
that every provider is at its target, every controller Deployment Available, every Cluster there,
unchanged and not paused. Journaled in DIR: the same command again continues where it stopped.

  --mgmt-kubeconfig FILE   the management cluster (default: DIR/<cluster>.kubeconfig, as bootstrap wrote it)
  --state-dir DIR          default .ferry-mgmt-<cluster> beside mgmt.yaml

Exit codes: 0 planned (nothing blocks) or upgraded and verified; 1 the plan is blocked (--dry-run);
2 bad usage or input, a blocked plan with --yes (nothing changed); 3 stopped (clusterctl failed,
the verification failed): fix it and run the same command again; 4 internal error.
`;

const options = {
  config: { type: 'string' },
  'mgmt-kubeconfig': { type: 'string' },
  to: { type: 'string' },
  'dry-run': { type: 'boolean' },
  yes: { type: 'boolean' },
  'state-dir': { type: 'string' },
  'provider-timeout': { type: 'string' },
  'backup-to': { type: 'string' },
  recipient: { type: 'string', multiple: true },
  'recipients-file': { type: 'string', multiple: true },
  's3-endpoint': { type: 'string' },
  's3-region': { type: 'string' },
  's3-credentials-file': { type: 'string' },
  's3-profile': { type: 'string' },
  output: { type: 'string', short: 'o' },
} as const;

export async function runMgmtUpgrade(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, options, upgradeUsage);
  noPositionals(positionals, upgradeUsage);
  if (values.config === undefined)
    throw usageError(
      'missing --config mgmt.yaml',
      'pass the mgmt.yaml the management cluster was built from',
    );
  const dryRun = values['dry-run'] === true;
  if (dryRun === (values.yes === true))
    throw usageError(
      dryRun
        ? '--dry-run and --yes exclude each other'
        : 'say what to do: --dry-run (plan only) or --yes (back up, upgrade, verify)',
      'run it with --dry-run first, read the release notes it links, then with --yes',
    );
  const format = oneOf('output', values.output, ['table', 'json'] as const, 'table');
  const { parseTargets } = await import('../mgmt/upgrade-plan.js');
  const parsed = values.to === undefined ? { kind: 'ok' as const, targets: {} } : parseTargets(values.to);
  if (parsed.kind === 'bad')
    throw usageError(
      `--to: ${parsed.problem}`,
      'write --to KEY=VERSION[,KEY=VERSION...], e.g. --to core=v1.14.1,talos-cp=v0.5.14',
    );
  const recipients = values.recipient ?? [];
  const recipientFiles = (values['recipients-file'] ?? []).map((f) => resolve(io.cwd, f));
  if (!dryRun && values['backup-to'] === undefined)
    throw usageError(
      '--yes needs --backup-to s3://BUCKET[/PREFIX]',
      'the upgrade starts with a fresh ferry mgmt backup there',
    );
  if (!dryRun && recipients.length + recipientFiles.length === 0)
    throw usageError(
      '--yes needs --recipient age1… or --recipients-file FILE',
      'the backup is encrypted for them',
    );

  const { loadMgmtConfig } = await import('../mgmt/bootstrap/config.js');
  const config = await loadMgmtConfig(resolve(io.cwd, values.config), values.config);
  const stateDir = resolve(
    io.cwd,
    values['state-dir'] ?? join(dirname(values.config), `.ferry-mgmt-${config.cluster.name}`),
  );
  const kubeconfig = resolve(
    io.cwd,
    values['mgmt-kubeconfig'] ?? join(stateDir, `${config.cluster.name}.kubeconfig`),
  );
  const { requireFileSync } = await import('../util/input-file.js');
  requireFileSync(kubeconfig, {
    flag: '--mgmt-kubeconfig',
    provide: "pass --mgmt-kubeconfig the management cluster's admin kubeconfig",
  });
  const { Tools } = await import('../mgmt/tools/adapter.js');
  const progress = (line: string) => io.stderr(`${line}\n`);
  // kubectl's stdout is the JSON ferry reads: only what clusterctl and helm say, and errors, are shown.
  const tools = new Tools({
    env: io.env,
    sink: (tool, stream, line) => {
      if (tool !== 'kubectl' || stream === 'stderr') progress(`${tool}: ${line}`);
    },
  });
  const { upgradeProviders } = await import('../mgmt/upgrade-providers.js');
  const out = await upgradeProviders({
    config,
    kubeconfig,
    targets: parsed.targets,
    stateDir,
    tools,
    mode: dryRun ? 'dry-run' : 'yes',
    providerTimeoutSeconds: providerTimeoutSeconds(values['provider-timeout']),
    progress,
    backup: async () => {
      const { backupManagement } = await import('../mgmt/backup-to.js');
      const r = await backupManagement({
        kubeconfig,
        to: values['backup-to']!,
        s3: s3Flags(io, values),
        recipients,
        recipientFiles,
        via: 'api',
        retention: {},
        env: io.env,
        log: progress,
      });
      const { renderBackup } = await import('../mgmt/render.js');
      return renderBackup(r, new Date()).trimEnd();
    },
  });
  const { describeBlocker, renderUpgradePlan } = await import('../mgmt/upgrade-plan.js');
  const blockers = out.plan.blockers.map((b) => ({ ...b, ...describeBlocker(b) }));
  if (format === 'json')
    io.stdout(`${JSON.stringify({ ...out, plan: { ...out.plan, blockers } }, null, 2)}\n`);
  else
    switch (out.kind) {
      case 'planned':
        io.stdout(renderUpgradePlan(out.plan, out.commands));
        break;
      case 'up-to-date':
        io.stdout(renderUpgradePlan(out.plan, []));
        break;
      case 'upgraded':
        io.stdout(
          `${
            renderUpgradePlan({ ...out.plan, blockers: [], upToDate: false }, []).split('\n\nwith --yes')[0]
          }\n\nbackup: ${out.backup}\nverified: ${out.verified.join('; ')}\n`,
        );
        break;
    }
  return out.kind === 'planned' && out.plan.blockers.length > 0 ? 1 : 0;
}
