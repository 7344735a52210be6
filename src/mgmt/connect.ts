/**
 * The management tools' connections, from resolved paths and flags: the API client for a
 * kubeconfig, the backup store for an s3:// URL, the clusterctl tool for `--via clusterctl`.
 */
import type { KubeObject } from './model.js';
import type { S3Flags, S3Location } from './s3-config.js';
import type { BackupStore } from './s3-store.js';
import type { Tools } from './tools/adapter.js';
import type { MoveTarget } from './via-clusterctl/move-dir.js';

export async function openMgmtKube(kubeconfig: string, context: string | undefined) {
  const { loadKubeconfig } = await import('../adapters/kube/kubeconfig.js');
  const { createRequester } = await import('../adapters/kube/request.js');
  const { MgmtKube } = await import('./kube.js');
  // Backup and restore make hundreds of requests: one TLS handshake per connection, not per request.
  return new MgmtKube(createRequester(loadKubeconfig(kubeconfig, context), { keepAlive: true }));
}

/** The versioned backup object at `url` (`flag` names it in errors); destroy() the store when done. */
export async function openStore(
  url: string,
  flag: string,
  s3: S3Flags,
  env: NodeJS.ProcessEnv,
): Promise<{ loc: S3Location; store: BackupStore }> {
  const { parseS3Url, resolveS3Settings } = await import('./s3-config.js');
  const { openBackupStore } = await import('./s3-store.js');
  const loc = parseS3Url(url, flag);
  return { loc, store: openBackupStore(loc, await resolveS3Settings(s3, env)) };
}

/** clusterctl through the tool adapter, checked first; its output lines go to `log`. */
export async function openClusterctl(env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<Tools> {
  const { Tools } = await import('./tools/adapter.js');
  const { requireClusterctl } = await import('./via-clusterctl/move-dir.js');
  const tools = new Tools({ env, sink: (tool, _s, line) => log(`${tool}: ${line}`) });
  await requireClusterctl(tools);
  return tools;
}

/** `--via clusterctl` backups: clusterctl (checked now) exports each namespace holding a Cluster. */
export async function openClusterctlExport(
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  target: MoveTarget,
) {
  const tools = await openClusterctl(env, log);
  const { moveToDirectory } = await import('./via-clusterctl/move-dir.js');
  return (clusters: KubeObject[]) =>
    moveToDirectory(
      tools,
      target,
      [...new Set(clusters.map((c) => c.metadata.namespace ?? 'default'))].sort(),
    );
}
