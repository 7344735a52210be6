import { resolve } from 'node:path';
import { type ExitCode, usageError } from '../errors.js';
import { abortOnSignals, oneOf, parseFlags, required, wholeNumber } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';

const usage = `usage: ferry mgmt bootstrap --config mgmt.yaml [...]
       ferry mgmt backup --to s3://BUCKET[/PREFIX] --kubeconfig FILE (--recipient age1… | --recipients-file FILE)...
                         [--keep N] [--keep-daily N] [--keep-weekly N] [S3 flags] [-o text|json]
       ferry mgmt restore --from s3://BUCKET[/PREFIX] [--version ID] --to-kubeconfig FILE --identity FILE
                          [--write-concurrency N] [S3 flags] [-o text|json]
       ferry mgmt restore --from s3://BUCKET[/PREFIX] [--version ID] --identity FILE [--state-dir DIR]
                          [--kind-name NAME] [--kind-image IMAGE] [--provider-timeout SEC]
                          [--bootstrap-config mgmt.yaml] [S3 flags] [-o text|json]
       ferry mgmt status [--kubeconfig FILE] [--from s3://BUCKET[/PREFIX] [--identity FILE] [--max-age DUR]]
                         [S3 flags] [-o table|json]

The management cluster (the one running Cluster API): build it, back it up, restore it.

  backup   exports the Cluster API object graph as \`clusterctl move --to-directory\` would (from each
           Cluster: ownerRef chains, its Secrets, ClusterClasses, the provider inventory) plus what
           move drops (statuses such as the TalosControlPlane's bootstrapped, unowned <cluster>-talos
           Secrets), encrypts it with age in memory and uploads it as a new version of
           PREFIX/ferry-mgmt-backup.age in a versioned bucket, reads it back and verifies its sha256,
           then applies the retention policy. Refuses paused clusters and clusters mid-migration;
           pauses the clusters while reading and always unpauses them.
  restore  downloads a version (default the newest), verifies, decrypts and checks it and the target
           (kinds served, providers at the recorded versions, nothing already there) before the
           first write; creates the objects owners first, puts the statuses back, unpauses, verifies
           (every Cluster Ready, Machines with nodeRefs, none re-created). A failed write deletes
           what the restore created. The target must run Cluster API at the recorded versions.
           Without --to-kubeconfig: into a new kind cluster (default ferry-restore), after a
           clusterctl init pinned to the provider versions the backup recorded; journaled in DIR
           (default .ferry-mgmt-restore): the same command again continues where a run stopped,
           with the backup version it started. No backup at all: it names ferry mgmt bootstrap, or
           runs it with --bootstrap-config mgmt.yaml.
  status   clusters, machines, providers and versions, what is paused; the newest backup's age and
           whether it verifies. Exit 1 when it is older than --max-age, does not verify, or is missing.

  --kubeconfig FILE          management cluster (default: $KUBECONFIG); --context NAME
  --to-kubeconfig FILE       cluster to restore into; --to-context NAME
  --recipient age1…          age recipient (repeatable); --recipients-file FILE (repeatable)
  --identity FILE            age identity file (age-keygen -o FILE)
  --keep N, --keep-daily N, --keep-weekly N
                             retention: newest N; newest of each of the last N days / ISO weeks
  --write-concurrency N      restore: writes in flight at most (default 16, at most 200); each
                             object is created as soon as its owners exist
  --via api|clusterctl       how to export or restore (default api: ferry's own, through the API;
                             clusterctl: \`clusterctl move --to-directory\` per namespace in a private
                             temporary directory, removed afterwards, plus what move drops;
                             restore: clusterctl move --from-directory, then the statuses)
  --block-move-timeout SEC   how long a provider may block the export (default 60)
  --max-age DUR              e.g. 90m, 26h, 8d
  S3 flags: --s3-endpoint URL (or AWS_ENDPOINT_URL_S3), --s3-region R (or AWS_REGION),
            --s3-credentials-file FILE (AWS shared credentials format) [--s3-profile P],
            else AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. Secrets are never flags.

Exit codes: 0 ok; 1 status finding (backup too old, unverifiable or missing; restore verification
failed); 2 bad usage or input (corrupted backup, wrong key, no such version, unreachable S3 or API);
3 stopped: a paused or mid-migration cluster, a provider blocking the move; 4 internal error.
`;

const s3Options = {
  's3-endpoint': { type: 'string' },
  's3-region': { type: 'string' },
  's3-credentials-file': { type: 'string' },
  's3-profile': { type: 'string' },
} as const;

const backupOptions = {
  ...s3Options,
  to: { type: 'string' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  recipient: { type: 'string', multiple: true },
  'recipients-file': { type: 'string', multiple: true },
  keep: { type: 'string' },
  'keep-daily': { type: 'string' },
  'keep-weekly': { type: 'string' },
  via: { type: 'string' },
  'block-move-timeout': { type: 'string' },
  output: { type: 'string', short: 'o' },
} as const;

const restoreOptions = {
  ...s3Options,
  from: { type: 'string' },
  version: { type: 'string' },
  'to-kubeconfig': { type: 'string' },
  'to-context': { type: 'string' },
  identity: { type: 'string' },
  'write-concurrency': { type: 'string' },
  output: { type: 'string', short: 'o' },
  'state-dir': { type: 'string' },
  'kind-name': { type: 'string' },
  'kind-image': { type: 'string' },
  'bootstrap-config': { type: 'string' },
  'provider-timeout': { type: 'string' },
  via: { type: 'string' },
} as const;

/** kube-apiserver's default --max-mutating-requests-inflight: more writes at once only earn 429s. */
const MAX_WRITE_CONCURRENCY = 200;

const statusOptions = {
  ...s3Options,
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  from: { type: 'string' },
  identity: { type: 'string' },
  'max-age': { type: 'string' },
  output: { type: 'string', short: 'o' },
} as const;

function noPositionals(p: string[]): void {
  if (p.length > 0) throw usageError(`unexpected argument "${p[0]}"`, `see usage:\n${usage.trim()}`);
}

const COUNT = { min: 1 };

export function parseDuration(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^(\d+)(s|m|h|d|w)$/.exec(v);
  if (!m) throw usageError(`--${flag} must be a number with a unit s, m, h, d or w (e.g. 26h); got "${v}"`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
}

async function kubeFor(io: Io, file: string | undefined, context: string | undefined, flag: string) {
  const path = file ?? (flag === '--kubeconfig' ? io.env['KUBECONFIG'] : undefined);
  const given = required(flag.slice(2), path, `pass ${flag} the management cluster's admin kubeconfig`);
  const { loadKubeconfig } = await import('../adapters/kube/kubeconfig.js');
  const { createRequester } = await import('../adapters/kube/request.js');
  const { MgmtKube } = await import('../mgmt/kube.js');
  // Backup and restore make hundreds of requests: one TLS handshake per connection, not per request.
  return new MgmtKube(createRequester(loadKubeconfig(resolve(io.cwd, given), context), { keepAlive: true }));
}

async function storeFor(io: Io, url: string, flag: string, values: Record<string, unknown>) {
  const { parseS3Url, resolveS3Settings } = await import('../mgmt/s3-config.js');
  const { openBackupStore } = await import('../mgmt/s3-store.js');
  const loc = parseS3Url(url, flag);
  const file = values['s3-credentials-file'] as string | undefined;
  const settings = await resolveS3Settings(
    {
      endpoint: values['s3-endpoint'] as string | undefined,
      region: values['s3-region'] as string | undefined,
      credentialsFile: file === undefined ? undefined : resolve(io.cwd, file),
      profile: values['s3-profile'] as string | undefined,
    },
    io.env,
  );
  return { loc, store: openBackupStore(loc, settings) };
}

/** `--via clusterctl`: the real clusterctl writes the graph (checked before anything is read). */
async function clusterctlExport(io: Io, values: { kubeconfig?: string; context?: string }) {
  const { Tools } = await import('../mgmt/tools/adapter.js');
  const { moveToDirectory, requireClusterctl } = await import('../mgmt/via-clusterctl/move-dir.js');
  const tools = new Tools({ env: io.env, sink: (tool, _s, line) => io.stderr(`${tool}: ${line}\n`) });
  await requireClusterctl(tools);
  const kubeconfig = resolve(io.cwd, (values.kubeconfig ?? io.env['KUBECONFIG'])!);
  return (clusters: import('../mgmt/model.js').KubeObject[]) =>
    moveToDirectory(
      tools,
      { kubeconfig, context: values.context },
      [...new Set(clusters.map((c) => c.metadata.namespace ?? 'default'))].sort(),
    );
}

async function backup(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, backupOptions, usage);
  noPositionals(positionals);
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
  const { loadRecipients } = await import('../mgmt/age.js');
  const recipients = await loadRecipients(
    values.recipient ?? [],
    (values['recipients-file'] ?? []).map((f) => resolve(io.cwd, f)),
  );
  const kube = await kubeFor(io, values.kubeconfig, values.context, '--kubeconfig');
  const moveExport = via === 'clusterctl' ? await clusterctlExport(io, values) : undefined;
  const { loc, store } = await storeFor(io, to, '--to', values);
  const { runBackup } = await import('../mgmt/backup.js');
  const { renderBackup } = await import('../mgmt/render.js');
  // SIGINT/SIGTERM abort the backup at its next step, so that it still unpauses what it paused.
  const sig = abortOnSignals({ again: 'ignore' });
  try {
    const r = await runBackup({
      kube,
      store,
      loc,
      recipients,
      retention,
      signal: sig.signal,
      ...(timeout !== undefined && { blockMoveTimeoutMs: timeout * 1000 }),
      ...(moveExport && { moveExport }),
      log: (l) => io.stderr(`${l}\n`),
    });
    io.stdout(format === 'json' ? `${JSON.stringify(r, null, 2)}\n` : renderBackup(r, new Date()));
    return 0;
  } finally {
    sig.dispose();
    store.destroy();
  }
}

async function restore(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, restoreOptions, usage);
  noPositionals(positionals);
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
  if (intoKind) {
    const { loc, store } = await storeFor(io, from, '--from', values);
    try {
      const { restoreIntoKindCli } = await import('./mgmt-restore-kind.js');
      return await restoreIntoKindCli(values, io, {
        loc,
        store,
        identities,
        identityFile: idFile,
        format,
        kubeFor: (file) => kubeFor(io, file, undefined, '--to-kubeconfig'),
        writeConcurrency,
      });
    } finally {
      store.destroy();
    }
  }
  const kube = await kubeFor(io, values['to-kubeconfig'], values['to-context'], '--to-kubeconfig');
  let viaClusterctl: import('../mgmt/tools/adapter.js').Tools | undefined;
  if (via === 'clusterctl') {
    const { Tools } = await import('../mgmt/tools/adapter.js');
    const { requireClusterctl } = await import('../mgmt/via-clusterctl/move-dir.js');
    viaClusterctl = new Tools({ env: io.env, sink: (tool, _s, line) => io.stderr(`${tool}: ${line}\n`) });
    await requireClusterctl(viaClusterctl);
  }
  const { loc, store } = await storeFor(io, from, '--from', values);
  const { fetchBackup, runRestore } = await import('../mgmt/restore.js');
  const { renderRestore } = await import('../mgmt/render.js');
  try {
    const backup = await fetchBackup({
      store,
      loc,
      versionId: values.version,
      identities,
      identityFile: idFile,
    });
    const log = (l: string) => io.stderr(`${l}\n`);
    const r = viaClusterctl
      ? await (await import('../mgmt/via-clusterctl/restore.js')).restoreViaClusterctl({
          kube,
          backup,
          loc,
          tools: viaClusterctl,
          target: { kubeconfig: resolve(io.cwd, values['to-kubeconfig']!), context: values['to-context'] },
          log,
        })
      : await runRestore({
          kube,
          backup,
          loc,
          log,
          ...(writeConcurrency !== undefined && { writeConcurrency }),
        });
    io.stdout(format === 'json' ? `${JSON.stringify(r, null, 2)}\n` : renderRestore(r));
    return r.verify.ok ? 0 : 1;
  } finally {
    store.destroy();
  }
}

async function status(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, statusOptions, usage);
  noPositionals(positionals);
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
  const { backupStatus, clusterStatus } = await import('../mgmt/status.js');
  const { renderStatus } = await import('../mgmt/render.js');
  const s: import('../mgmt/status.js').MgmtStatus = {};
  if (kubeconfig !== undefined)
    Object.assign(s, await clusterStatus(await kubeFor(io, kubeconfig, values.context, '--kubeconfig')));
  if (values.from !== undefined) {
    const { loc, store } = await storeFor(io, values.from, '--from', values);
    try {
      let identity: { identities: string[]; file: string } | undefined;
      if (values.identity !== undefined) {
        const file = resolve(io.cwd, values.identity);
        const { loadIdentities } = await import('../mgmt/age.js');
        identity = { identities: await loadIdentities(file), file };
      }
      s.backup = await backupStatus({ store, loc, now: new Date(), ...(identity && { identity }) });
    } finally {
      store.destroy();
    }
  }
  io.stdout(format === 'json' ? `${JSON.stringify(s, null, 2)}\n` : renderStatus(s, maxAge));
  const n = s.backup?.newest;
  if (s.backup && (!n?.verified || (maxAge !== undefined && n.ageSeconds > maxAge))) return 1;
  return 0;
}

export const command: Command = {
  name: 'mgmt',
  summary: 'the management cluster: bootstrap, encrypted backups to S3 (backup), restore, status',
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
      default:
        throw usageError(
          sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`,
          `see usage:\n${usage.trim()}`,
        );
    }
  },
};
