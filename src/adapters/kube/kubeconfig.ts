/**
 * Kubeconfig loading and context selection with errors that say what to do. client-node does the
 * parsing, relative-path resolution and authentication (certs, tokens, exec plugins).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { inputError } from '../../errors.js';
import { requireFileSync } from '../../util/input-file.js';

export interface LoadedKubeconfig {
  kc: KubeConfig;
  file: string;
  context: string;
  /** The server URL of the selected context's cluster. */
  server: string;
}

export function loadKubeconfig(file: string, context?: string): LoadedKubeconfig {
  requireFileSync(file, {
    flag: '--kubeconfig',
    provide: 'pass --kubeconfig the path of an admin kubeconfig (e.g. a copy of /etc/kubernetes/admin.conf)',
  });
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(file);
  } catch (err) {
    throw inputError(
      `kubeconfig ${file} cannot be read: ${(err as Error).message}`,
      { file },
      'check the file is a kubeconfig (apiVersion: v1, kind: Config) with clusters, users and contexts',
      err,
    );
  }
  const names = kc.getContexts().map((c) => c.name);
  const listed = names.length > 0 ? names.join(', ') : '(none)';
  const chosen = context ?? (kc.getCurrentContext() || undefined);
  if (chosen === undefined) {
    throw inputError(
      `kubeconfig ${file} has no current-context and no --context was given`,
      { file, field: 'current-context' },
      `pass --context with one of: ${listed}`,
    );
  }
  const ctx = kc.getContextObject(chosen);
  if (!ctx) {
    throw inputError(
      `context "${chosen}" does not exist in kubeconfig ${file}; it has: ${listed}`,
      { file, field: context !== undefined ? 'contexts' : 'current-context' },
      names.length > 0 ? `pass --context with one of: ${listed}` : 'add a context to the kubeconfig',
    );
  }
  kc.setCurrentContext(chosen);
  const cluster = kc.getCluster(ctx.cluster);
  if (!cluster) {
    throw inputError(
      `context "${chosen}" names cluster "${ctx.cluster}", which is not in kubeconfig ${file}`,
      { file, object: `context ${chosen}`, field: 'context.cluster' },
      'fix the context or add the cluster entry',
    );
  }
  if (ctx.user && !kc.getUser(ctx.user)) {
    throw inputError(
      `context "${chosen}" names user "${ctx.user}", which is not in kubeconfig ${file}`,
      { file, object: `context ${chosen}`, field: 'context.user' },
      'fix the context or add the user entry',
    );
  }
  if (!cluster.server) {
    throw inputError(
      `cluster "${cluster.name}" in kubeconfig ${file} has no server`,
      { file, object: `cluster ${cluster.name}`, field: 'cluster.server' },
      'set the API server URL, e.g. https://10.0.0.10:6443',
    );
  }
  return { kc, file, context: chosen, server: cluster.server.replace(/\/+$/, '') };
}
