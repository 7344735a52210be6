/**
 * Reading a live cluster from the command line, shared by `ferry snapshot` and `ferry audit
 * --kubeconfig`: the flags, their checks, and the collection with its progress on stderr. Adapters are
 * imported only when a live cluster is actually read, so offline commands never load them.
 */
import { resolve } from 'node:path';
import { usageError } from '../errors.js';
import type { ResourceSink } from '../snapshot/collect.js';
import type { Snapshot } from '../snapshot/model.js';
import { collectProgress } from './collect-progress.js';
import type { Io } from './io.js';

export const ETCD_FLAGS = ['etcd-endpoints', 'etcd-cacert', 'etcd-cert', 'etcd-key'] as const;
/** Every flag that only means something for a live cluster. */
export const LIVE_FLAGS = ['kubeconfig', 'context', 'pki', ...ETCD_FLAGS] as const;

export type LiveFlag = (typeof LIVE_FLAGS)[number];
export type LiveValues = Partial<Record<LiveFlag, string>>;

/** The live flags that were given, in LIVE_FLAGS order (for "cannot be combined with" errors). */
export function liveFlagsGiven(values: LiveValues): LiveFlag[] {
  return LIVE_FLAGS.filter((f) => values[f] !== undefined);
}

/** The four etcd flags go together or not at all; true when they are given. */
export function etcdFlagsGiven(values: LiveValues): boolean {
  const given = ETCD_FLAGS.filter((f) => values[f] !== undefined);
  if (given.length > 0 && given.length < ETCD_FLAGS.length) {
    const missing = ETCD_FLAGS.filter((f) => values[f] === undefined);
    throw usageError(
      `etcd needs all of ${ETCD_FLAGS.map((f) => `--${f}`).join(', ')}; missing ${missing.map((f) => `--${f}`).join(', ')}`,
      'pass the four etcd flags together, or none to skip etcd',
    );
  }
  return given.length > 0;
}

export interface LiveCollection {
  snapshot: Snapshot;
  /** The API server URL and kubeconfig context that were read. */
  server: string;
  context: string;
}

/**
 * Collects a snapshot from the cluster `kubeconfig` points at (paths relative to io.cwd). With
 * `strictPki` a PKI copy that cannot be used (missing CA, mismatched or encrypted key) is bad input;
 * without, its problems stay in the inventory for the audit to report. With `sink` the listed
 * objects go there as they arrive and the snapshot's resources stay empty.
 */
export async function collectLive(
  kubeconfig: string,
  values: LiveValues,
  io: Io,
  opts: { strictPki: boolean; sink?: ResourceSink },
): Promise<LiveCollection> {
  const path = (p: string) => resolve(io.cwd, p);
  const withEtcd = etcdFlagsGiven(values);
  const [{ createKubeReader }, { collectSnapshot, LIST_COUNT }] = await Promise.all([
    import('../adapters/kube/reader.js'),
    import('../snapshot/collect.js'),
  ]);
  const kube = createKubeReader({
    kubeconfig: path(kubeconfig),
    ...(values.context !== undefined && { context: values.context }),
  });
  let pki: Snapshot['pki'];
  if (values.pki !== undefined) {
    const { assertPkiUsable, inventoryPki } = await import('../snapshot/pki.js');
    const dir = path(values.pki);
    pki = await inventoryPki(dir, { shown: values.pki, flag: '--pki' });
    if (opts.strictPki) assertPkiUsable(pki, dir);
  }
  const etcd = withEtcd
    ? (await import('../adapters/etcd/reader.js')).createEtcdReader({
        endpoints: values['etcd-endpoints']!.split(',').filter((e) => e.trim() !== ''),
        caFile: path(values['etcd-cacert']!),
        certFile: path(values['etcd-cert']!),
        keyFile: path(values['etcd-key']!),
      })
    : undefined;
  const progress = collectProgress(io, LIST_COUNT);
  try {
    const snapshot = await collectSnapshot({
      kube,
      ...(etcd && { etcd }),
      ...(pki && { pki }),
      ...(opts.sink && { sink: opts.sink }),
      progress: progress.show,
    });
    return { snapshot, server: kube.server, context: kube.context };
  } finally {
    progress.clear();
    etcd?.close();
  }
}
