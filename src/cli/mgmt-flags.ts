/** The grammar of `ferry mgmt`: its usage text, the flags of each subcommand, the flags they share. */
import { resolve } from 'node:path';
import type { S3Flags } from '../mgmt/s3-config.js';
import { required, seconds } from './args.js';
import type { Io } from './io.js';

export const usage = `usage: ferry mgmt bootstrap --config mgmt.yaml [...]
       ferry mgmt backup --to s3://BUCKET[/PREFIX] --kubeconfig FILE (--recipient age1… | --recipients-file FILE)...
                         [--keep N] [--keep-daily N] [--keep-weekly N] [S3 flags] [-o text|json]
       ferry mgmt restore --from s3://BUCKET[/PREFIX] [--version ID] --to-kubeconfig FILE --identity FILE
                          [--write-concurrency N] [S3 flags] [-o text|json]
       ferry mgmt restore --from s3://BUCKET[/PREFIX] [--version ID] --identity FILE [--state-dir DIR]
                          [--kind-name NAME] [--kind-image IMAGE] [--provider-timeout SEC]
                          [--bootstrap-config mgmt.yaml] [S3 flags] [-o text|json]
       ferry mgmt status [--kubeconfig FILE] [--from s3://BUCKET[/PREFIX] [--identity FILE] [--max-age DUR]]
                         [S3 flags] [-o table|json]
       ferry mgmt upgrade-providers --config mgmt.yaml (--dry-run | --yes --backup-to s3://…) [--to KEY=VERSION,...]

The management cluster (the one running Cluster API): build it, back it up, restore it.

  backup   exports the Cluster API object graph as \`clusterctl move --to-directory\` would (from each
           Cluster: ownerRef chains, its Secrets, ClusterClasses, the provider inventory) plus what
           move drops (statuses such as the TalosControlPlane's bootstrapped, unowned <cluster>-talos
           Secrets) and what no owner reference reaches yet (after capi adopt, or with the controllers
           down: objects with the Cluster's cluster-name label and whatever the controlPlaneRef,
           infrastructureRef and templates name), encrypts it with age in memory and uploads it as a
           new version of PREFIX/ferry-mgmt-backup.age in a versioned bucket, reads it back and
           verifies its sha256, then applies the retention policy. Refuses (exit 3) paused clusters,
           any object mid-migration, and an archive missing an object a Cluster, TalosControlPlane or
           MachineDeployment names; pauses the clusters while reading and always unpauses them.
  restore  downloads a version (default the newest), verifies, decrypts and checks it (every object
           its Clusters, TalosControlPlanes and MachineDeployments name is in it) and the target
           (kinds served, providers at the recorded versions, nothing already there) before the
           first write; creates the objects owners first, puts the statuses back, unpauses, verifies
           (every Cluster Ready, Machines with nodeRefs, none re-created, every such reference
           resolving). A failed write deletes what the restore created; the target's API server
           refusing a write (403, 409, 422) is exit 2 with its message. The target must run Cluster API at the recorded versions.
           Without --to-kubeconfig: into a new kind cluster (default ferry-restore), after a
           clusterctl init pinned to the provider versions the backup recorded; journaled in DIR
           (default .ferry-mgmt-restore): the same command again continues where a run stopped,
           with the backup version it started. No backup at all: it names ferry mgmt bootstrap, or
           runs it with --bootstrap-config mgmt.yaml.
  upgrade-providers  plans the Cluster API providers' upgrade to mgmt.yaml's pins (--to overrides),
           with contracts, release notes and blockers; --yes backs up, runs one pinned clusterctl
           upgrade apply (or the operator chart with the new versions) and verifies; journaled.
           --mgmt-kubeconfig FILE (default: the state directory's, as bootstrap wrote it),
           --backup-to s3://… with --recipient/--recipients-file and S3 flags, --state-dir DIR.
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

export const backupOptions = {
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

export const restoreOptions = {
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

export const statusOptions = {
  ...s3Options,
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  from: { type: 'string' },
  identity: { type: 'string' },
  'max-age': { type: 'string' },
  output: { type: 'string', short: 'o' },
} as const;

/**
 * `--provider-timeout`, shared by bootstrap and a restore into kind: seconds, more than 0, rounded
 * up to the whole seconds clusterctl's --wait-provider-timeout takes; 600 when not given.
 */
export function providerTimeoutSeconds(value: string | undefined): number {
  return Math.ceil(seconds('provider-timeout', value, { positive: true }) ?? 600);
}

/** kube-apiserver's default --max-mutating-requests-inflight: more writes at once only earn 429s. */
export const MAX_WRITE_CONCURRENCY = 200;

/** The kubeconfig a flag names (--kubeconfig falls back to $KUBECONFIG), resolved. */
export function kubeconfigPath(io: Io, file: string | undefined, flag: string): string {
  const path = file ?? (flag === '--kubeconfig' ? io.env['KUBECONFIG'] : undefined);
  return resolve(
    io.cwd,
    required(flag.slice(2), path, `pass ${flag} the management cluster's admin kubeconfig`),
  );
}

export function s3Flags(io: Io, values: Record<string, unknown>): S3Flags {
  const file = values['s3-credentials-file'] as string | undefined;
  return {
    endpoint: values['s3-endpoint'] as string | undefined,
    region: values['s3-region'] as string | undefined,
    credentialsFile: file === undefined ? undefined : resolve(io.cwd, file),
    profile: values['s3-profile'] as string | undefined,
  };
}
