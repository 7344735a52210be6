import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { EtcdReader } from '../adapters/etcd/port.js';
import { usageError } from '../errors.js';
import type { Snapshot } from '../snapshot/model.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';

const usage = `usage: ferry snapshot --kubeconfig FILE [--context NAME] -o DIR [--force]
                     [--etcd-endpoints URL,... --etcd-cacert FILE --etcd-cert FILE --etcd-key FILE]
                     [--pki DIR]
       ferry snapshot --from FILES_DIR -o DIR [--force]

Captures a live cluster (or assembles one from a files directory, see docs/snapshot-layout.md)
into a snapshot directory, the input of every offline command.

  --kubeconfig FILE       admin kubeconfig (default: $KUBECONFIG)
  --context NAME          kubeconfig context (default: its current-context)
  -o, --output DIR        snapshot directory to write
  --force                 replace DIR if it exists
  --etcd-endpoints LIST   etcd client URLs, comma-separated (https://10.0.0.11:2379,...)
  --etcd-cacert FILE      etcd CA (kubeadm: /etc/kubernetes/pki/etcd/ca.crt)
  --etcd-cert FILE        etcd client certificate (kubeadm: pki/etcd/healthcheck-client.crt)
  --etcd-key FILE         its key
  --pki DIR               a copy of /etc/kubernetes/pki to inventory (keys are checked, never stored)
  --from FILES_DIR        assemble from files instead of a live cluster
`;

const options = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  output: { type: 'string', short: 'o' },
  force: { type: 'boolean' },
  'etcd-endpoints': { type: 'string' },
  'etcd-cacert': { type: 'string' },
  'etcd-cert': { type: 'string' },
  'etcd-key': { type: 'string' },
  pki: { type: 'string' },
  from: { type: 'string' },
} as const;

const ETCD_FLAGS = ['etcd-endpoints', 'etcd-cacert', 'etcd-cert', 'etcd-key'] as const;

export const command: Command = {
  name: 'snapshot',
  summary: 'capture a live cluster (and optionally its etcd) into a snapshot directory',
  usage,
  async run(argv, io) {
    const { values, positionals } = parseFlags(argv, options, usage);
    if (positionals.length > 0)
      throw usageError(`unexpected argument "${positionals[0]}"`, `see usage:\n${usage.trim()}`);
    if (values.output === undefined)
      throw usageError('missing -o DIR', 'say where to write the snapshot: -o DIR');
    const path = (p: string) => resolve(io.cwd, p);
    const out = path(values.output);
    const force = values.force === true;
    // Checked again when saving; asking first spares a long collection that cannot be written.
    if (existsSync(out) && !force) {
      throw usageError(`${out} already exists`, 'choose another output directory or pass --force');
    }

    if (values.from !== undefined) {
      const live = (['kubeconfig', 'context', 'pki', ...ETCD_FLAGS] as const).filter(
        (f) => values[f] !== undefined,
      );
      if (live.length > 0) {
        throw usageError(
          `--from cannot be combined with ${live.map((f) => `--${f}`).join(', ')}`,
          'a files directory carries its own pki/ and etcd/ (docs/snapshot-layout.md)',
        );
      }
      const from = path(values.from);
      if (from === out)
        throw usageError('-o must differ from --from', 'write the snapshot to another directory');
      const { loadSnapshot } = await import('../snapshot/load.js');
      const snapshot = await loadSnapshot(from);
      await save(snapshot, out, force, io, `files ${values.from}`);
      return 0;
    }

    const kubeconfig = values.kubeconfig ?? firstKubeconfig(io.env['KUBECONFIG']);
    if (kubeconfig === undefined) {
      throw usageError(
        'missing --kubeconfig FILE',
        'pass an admin kubeconfig (a copy of /etc/kubernetes/admin.conf)',
      );
    }
    const etcdGiven = ETCD_FLAGS.filter((f) => values[f] !== undefined);
    if (etcdGiven.length > 0 && etcdGiven.length < ETCD_FLAGS.length) {
      const missing = ETCD_FLAGS.filter((f) => values[f] === undefined);
      throw usageError(
        `etcd needs all of ${ETCD_FLAGS.map((f) => `--${f}`).join(', ')}; missing ${missing.map((f) => `--${f}`).join(', ')}`,
        'pass the four etcd flags together, or none to skip etcd',
      );
    }

    // Adapters load only for live collection: --from needs no Kubernetes or etcd client.
    const [{ createKubeReader }, { collectSnapshot }] = await Promise.all([
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
      pki = await inventoryPki(dir);
      assertPkiUsable(pki, dir);
    }
    let etcd: EtcdReader | undefined;
    if (etcdGiven.length > 0) {
      const { createEtcdReader } = await import('../adapters/etcd/reader.js');
      etcd = createEtcdReader({
        endpoints: values['etcd-endpoints']!.split(',').filter((e) => e.trim() !== ''),
        caFile: path(values['etcd-cacert']!),
        certFile: path(values['etcd-cert']!),
        keyFile: path(values['etcd-key']!),
      });
    }
    const progress = progressLine(io);
    let snapshot: Snapshot;
    try {
      snapshot = await collectSnapshot({
        kube,
        ...(etcd && { etcd }),
        ...(pki && { pki }),
        ...(progress && { progress: progress.show }),
      });
    } finally {
      progress?.clear();
      etcd?.close();
    }
    await save(snapshot, out, force, io, `${kube.server} (context ${kube.context})`);
    return 0;
  },
};

function firstKubeconfig(env: string | undefined): string | undefined {
  const first = env?.split(':').find((p) => p !== '');
  return first === undefined || first === '' ? undefined : first;
}

async function save(snapshot: Snapshot, out: string, force: boolean, io: Io, what: string): Promise<void> {
  const { saveSnapshot } = await import('../snapshot/store.js');
  await saveSnapshot(snapshot, out, { force });
  for (const w of snapshot.manifest.warnings) io.stderr(`warning: ${w}\n`);
  io.stdout(`${summary(snapshot, out, what)}\n`);
}

export function summary(s: Snapshot, out: string, what: string): string {
  const n = (count: number, word: string) =>
    `${count.toLocaleString('en-US')} ${word}${count === 1 ? '' : 's'}`;
  const parts = [
    n(s.resources.nodes.length, 'node'),
    n(s.resources.pods.length, 'pod'),
    n(s.staticPods.length, 'static pod'),
    n(s.servedCertificates.filter((c) => c.certificate).length, 'served certificate'),
  ];
  if (s.pki) parts.push(n(s.pki.certificates.length, 'PKI certificate'));
  if (s.etcd) parts.push(`etcd ${n(s.etcd.members.length, 'member')}`);
  const warnings = s.manifest.warnings.length;
  return `snapshot of ${what} written to ${out}: ${parts.join(', ')}${warnings > 0 ? `; ${n(warnings, 'warning')} (above)` : ''}`;
}

/** A single self-overwriting status line on stderr, only on a terminal, at most ~10 times a second. */
function progressLine(io: Io): { show: (line: string) => void; clear: () => void } | undefined {
  if (!io.isTTY) return undefined;
  let last = 0;
  let shown = false;
  return {
    show(line) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      shown = true;
      io.stderr(`\r\x1b[K${line.slice(0, 100)}`);
    },
    clear() {
      if (shown) io.stderr('\r\x1b[K');
    },
  };
}
