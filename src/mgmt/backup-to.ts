/**
 * `ferry mgmt backup` wired from resolved flags: the recipients, the management cluster's API,
 * clusterctl for `--via clusterctl` (checked before anything is read) and the bucket, then the
 * backup itself (backup.ts).
 */
import type { BackupOptions, BackupReport } from './backup.js';
import { openClusterctlExport, openMgmtKube, openStore } from './connect.js';
import type { S3Flags } from './s3-config.js';

export async function backupManagement(
  o: Omit<BackupOptions, 'kube' | 'store' | 'loc' | 'recipients' | 'moveExport' | 'log'> & {
    kubeconfig: string;
    context?: string | undefined;
    /** s3://BUCKET[/PREFIX] and its S3 settings. */
    to: string;
    s3: S3Flags;
    recipients: string[];
    recipientFiles: string[];
    via: 'api' | 'clusterctl';
    env: NodeJS.ProcessEnv;
    log: (line: string) => void;
  },
): Promise<BackupReport> {
  const { loadRecipients } = await import('./age.js');
  const recipients = await loadRecipients(o.recipients, o.recipientFiles);
  const kube = await openMgmtKube(o.kubeconfig, o.context);
  const target = { kubeconfig: o.kubeconfig, context: o.context };
  const moveExport = o.via === 'clusterctl' ? await openClusterctlExport(o.env, o.log, target) : undefined;
  const { loc, store } = await openStore(o.to, '--to', o.s3, o.env);
  const { runBackup } = await import('./backup.js');
  try {
    return await runBackup({
      kube,
      store,
      loc,
      recipients,
      retention: o.retention,
      log: o.log,
      ...(o.now && { now: o.now }),
      ...(o.signal && { signal: o.signal }),
      ...(o.blockMoveTimeoutMs !== undefined && { blockMoveTimeoutMs: o.blockMoveTimeoutMs }),
      ...(moveExport && { moveExport }),
    });
  } finally {
    store.destroy();
  }
}
