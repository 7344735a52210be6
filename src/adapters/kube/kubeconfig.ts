/**
 * Kubeconfig loading and context selection with errors that say what to do. client-node does the
 * parsing, relative-path resolution and authentication (certs, tokens, exec plugins); what it takes
 * without complaint but cannot use (a server that is not a URL) is checked here, before anything
 * connects.
 */
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { isNode, LineCounter, parseDocument } from 'yaml';
import { inputError, type Location } from '../../errors.js';
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
  const text = () => readFileSync(file, 'utf8');
  try {
    kc.loadFromFile(file);
  } catch (err) {
    throw unparsable(err, file, text);
  }
  return selectContext(kc, file, context, text);
}

/**
 * A kubeconfig held in memory, such as a Cluster API `<cluster>-kubeconfig` Secret's: checked as a
 * file is, `shown` naming it in every error; it is never written to disk.
 */
export function kubeconfigFromText(text: string, shown: string, context?: string): LoadedKubeconfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (err) {
    throw unparsable(err, shown, () => text);
  }
  return selectContext(kc, shown, context, () => text);
}

function unparsable(err: unknown, file: string, text: () => string): Error {
  const mark = yamlMark(err);
  if (mark) {
    // Not the parser's message: its excerpt of the file may show a client key or a token.
    return inputError(
      `kubeconfig ${file} is not valid YAML: ${mark.reason}`,
      { file, line: mark.line, column: mark.column },
      'fix the YAML at that line (indentation, a missing ":", a cut-off file), or copy the kubeconfig again',
    );
  }
  // client-node reads fields of the parsed document without checking there is one.
  if (err instanceof TypeError && isEmptyYaml(text)) {
    return inputError(
      `kubeconfig ${file} is not a kubeconfig: it is empty`,
      { file },
      'pass --kubeconfig an admin kubeconfig (apiVersion: v1, kind: Config), e.g. a copy of /etc/kubernetes/admin.conf',
    );
  }
  return inputError(
    `kubeconfig ${file} cannot be read: ${(err as Error).message}`,
    { file },
    'check the file is a kubeconfig (apiVersion: v1, kind: Config) with clusters, users and contexts',
    err,
  );
}

/** The context asked for (or the current one), checked for what client-node takes but cannot use. */
function selectContext(
  kc: KubeConfig,
  file: string,
  context: string | undefined,
  text: () => string,
): LoadedKubeconfig {
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
  if (!isApiUrl(cluster.server)) {
    throw inputError(
      `cluster "${cluster.name}" in kubeconfig ${file} has server "${cluster.server}", which is not an https:// or http:// URL`,
      { file, ...serverLine(text, cluster.name), object: `cluster ${cluster.name}`, field: 'cluster.server' },
      'set the API server URL, e.g. https://10.0.0.10:6443 (an IPv6 address in brackets: https://[fd00::10]:6443)',
    );
  }
  return { kc, file, context: chosen, server: cluster.server.replace(/\/+$/, '') };
}

function isApiUrl(server: string): boolean {
  try {
    const url = new URL(server);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Where a js-yaml syntax error is (1-based), and why; client-node parses kubeconfigs with js-yaml. */
function yamlMark(err: unknown): { line: number; column: number; reason: string } | undefined {
  const e = err as { name?: unknown; reason?: unknown; mark?: { line?: unknown; column?: unknown } } | null;
  if (e?.name !== 'YAMLException' || typeof e.mark?.line !== 'number') return undefined;
  return {
    line: e.mark.line + 1,
    column: typeof e.mark.column === 'number' ? e.mark.column + 1 : 1,
    reason: typeof e.reason === 'string' ? e.reason : 'syntax error',
  };
}

function isEmptyYaml(text: () => string): boolean {
  try {
    return parseDocument(text()).contents === null;
  } catch {
    return false;
  }
}

/** The line of `clusters[name].cluster.server`, when the text can be read again and has it. */
function serverLine(text: () => string, name: string): Pick<Location, 'line'> {
  try {
    const lineCounter = new LineCounter();
    const doc = parseDocument(text(), { lineCounter });
    const clusters = doc.toJS() as { clusters?: { name?: unknown }[] } | null;
    const i = clusters?.clusters?.findIndex((c) => c?.name === name) ?? -1;
    const node = i < 0 ? undefined : doc.getIn(['clusters', i, 'cluster', 'server'], true);
    return isNode(node) && node.range ? { line: lineCounter.linePos(node.range[0]).line } : {};
  } catch {
    return {};
  }
}
