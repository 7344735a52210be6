import { resolve } from 'node:path';
import { type ExitCode, usageError } from '../errors.js';
import {
  abortOnSignals,
  noPositionals,
  oneOf,
  parseDuration,
  parseFlags,
  required,
  wholeNumber,
} from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';
import {
  backupOptions,
  kubeconfigPath,
  MAX_WRITE_CONCURRENCY,
  restoreOptions,
  s3Flags,
  statusOptions,
  usage,
} from './mgmt-flags.js';

const COUNT = { min: 1 };

async function backup(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, backupOptions, usage);
  noPositionals(positionals, usage);
  const format = oneOf('output', values.output, ['text', 'json'] as const, 'text');
  const via = oneOf('via', values.via, ['api', 'clusterctl'] as const, 'api');
  const to = required('to', values.to, 'say where to store the backup: --to s3://BUCKET/PREFIX');
  const retention = {
    ...(values.keep !== undefined && { keep: wholeNumber('keep', values.keep, COUNT)! }),
    ...(values['keep-daily'] !== undefined && {
      keepDaily: wholeNumber('keep-daily', values['keep-daily'], COUNT)!,
    }),
    ...(values['keep-weekly'] !== undefined && {
      keepWeekly: wholeNumber('keep-weekly', values['keep-weekly'], COUNT)!,
    }),
  };
  const timeout = parseDuration(
    'block-move-timeout',
    values['block-move-timeout'] === undefined ? undefined : `${values['block-move-timeout']}s`,
  );
  const { backupManagement } = await import('../mgmt/backup-to.js');
  const { renderBackup } = await import('../mgmt/render.js');
  const sig = abortOnSignals({ again: 'ignore' });
  try {
    const r = await backupManagement({
      kubeconfig: kubeconfigPath(io, values.kubeconfig, '--kubeconfig'),
      context: values.context,
      to,
      s3: s3Flags(io, values),
      recipients: values.recipient ?? [],
      recipientFiles: (values['recipients-file'] ?? []).map((f) => resolve(io.cwd, f)),
      via,
      retention,
      signal: sig.signal,
      ...(timeout !== undefined && { blockMoveTimeoutMs: timeout * 1000 }),
      env: io.env,
      log: (l) => io.stderr(`${l}\n`),
    });
    io.stdout(format === 'json' ? `${JSON.stringify(r, null, 2)}\n` : renderBackup(r, new Date()));
    return 0;
  } finally {
    sig.dispose();
  }
}

async function restore(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, restoreOptions, usage);
  noPositionals(positionals, usage);
  const format = oneOf('output', values.output, ['text', 'json'] as const, 'text');
  const writeConcurrency = wholeNumber('write-concurrency', values['write-concurrency'], COUNT);
  if (writeConcurrency !== undefined && writeConcurrency > MAX_WRITE_CONCURRENCY)
    throw usageError(
      `--write-concurrency must be at most ${MAX_WRITE_CONCURRENCY}; got ${writeConcurrency}`,
      'an API server answers more concurrent writes than its in-flight limit with 429 Too Many Requests',
    );
  const from = required('from', values.from, 'name the backup: --from s3://BUCKET/PREFIX');
  const idFile = resolve(
    io.cwd,
    required('identity', values.identity, 'pass --identity the age key file the backup was encrypted for'),
  );
  const { loadIdentities } = await import('../mgmt/age.js');
  const identities = await loadIdentities(idFile);
  const intoKind = values['to-kubeconfig'] === undefined;
  if (intoKind && values['to-context'] !== undefined)
    throw usageError('--to-context names a context of --to-kubeconfig: give --to-kubeconfig too');
  const kindOnly = (
    ['state-dir', 'kind-name', 'kind-image', 'bootstrap-config', 'provider-timeout'] as const
  ).find((f) => values[f] !== undefined);
  if (!intoKind && kindOnly !== undefined)
    throw usageError(`--${kindOnly} is about a restore into kind: drop it, or drop --to-kubeconfig`);
  const via = oneOf('via', values.via, ['api', 'clusterctl'] as const, 'api');
  if (intoKind && via === 'clusterctl')
    throw usageError('--via clusterctl restores into a cluster you name: give --to-kubeconfig too');
  if (via === 'clusterctl' && writeConcurrency !== undefined)
    throw usageError(
      "--write-concurrency paces ferry's own writes; with --via clusterctl, clusterctl move writes: drop one",
    );
  const to = intoKind
    ? undefined
    : {
        kubeconfig: kubeconfigPath(io, values['to-kubeconfig'], '--to-kubeconfig'),
        context: values['to-context'],
      };
  const { kindTarget, kindOutcome } = await import('./mgmt-restore-kind.js');
  const { restoreManagement } = await import('../mgmt/restore-into.js');
  const out = await restoreManagement({
    from,
    s3: s3Flags(io, values),
    versionId: values.version,
    identities,
    identityFile: idFile,
    into:
      to === undefined
        ? kindTarget(values, io, writeConcurrency)
        : via === 'clusterctl'
          ? { kind: 'clusterctl', ...to }
          : { kind: 'cluster', ...to, writeConcurrency },
    env: io.env,
    log: (l) => io.stderr(`${l}\n`),
  });
  if (out.into === 'kind')
    return kindOutcome(out.outcome, io, { bootstrapConfig: values['bootstrap-config'], format });
  const { renderRestore } = await import('../mgmt/render.js');
  io.stdout(format === 'json' ? `${JSON.stringify(out.report, null, 2)}\n` : renderRestore(out.report));
  return out.report.verify.ok ? 0 : 1;
}

async function status(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, statusOptions, usage);
  noPositionals(positionals, usage);
  const format = oneOf('output', values.output, ['table', 'json'] as const, 'table');
  const maxAge = parseDuration('max-age', values['max-age']);
  if (values.from === undefined && (maxAge !== undefined || values.identity !== undefined))
    throw usageError('--max-age and --identity are about a backup: give --from s3://BUCKET/PREFIX too');
  const kubeconfig = values.kubeconfig ?? io.env['KUBECONFIG'];
  if (kubeconfig === undefined && values.from === undefined)
    throw usageError(
      'nothing to report on',
      'pass --kubeconfig (the management cluster) and/or --from s3://BUCKET/PREFIX (its backups)',
    );
  const { mgmtStatus, statusFinding } = await import('../mgmt/status.js');
  const { renderStatus } = await import('../mgmt/render.js');
  const s = await mgmtStatus({
    cluster:
      kubeconfig === undefined
        ? undefined
        : { kubeconfig: kubeconfigPath(io, kubeconfig, '--kubeconfig'), context: values.context },
    backup:
      values.from === undefined
        ? undefined
        : {
            url: values.from,
            s3: s3Flags(io, values),
            identityFile: values.identity === undefined ? undefined : resolve(io.cwd, values.identity),
          },
    env: io.env,
    now: new Date(),
  });
  io.stdout(format === 'json' ? `${JSON.stringify(s, null, 2)}\n` : renderStatus(s, maxAge));
  return statusFinding(s, maxAge) ? 1 : 0;
}

export const command: Command = {
  name: 'mgmt',
  summary:
    'the management cluster: bootstrap, encrypted backups to S3 (backup), restore, status, upgrade-providers',
  usage,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    switch (sub) {
      case 'bootstrap':
        return (await import('./mgmt-bootstrap.js')).runMgmtBootstrap(rest, io);
      case 'backup':
        return backup(rest, io);
      case 'restore':
        return restore(rest, io);
      case 'status':
        return status(rest, io);
      case 'upgrade-providers':
        return (await import('./mgmt-upgrade.js')).runMgmtUpgrade(rest, io);
      default:
        throw usageError(
          sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`,
          `see usage:\n${usage.trim()}`,
        );
    }
  },
};
