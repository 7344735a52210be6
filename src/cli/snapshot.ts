import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { inputError, usageError } from '../errors.js';
import type { Snapshot } from '../snapshot/model.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';
import { collectLive, liveFlagsGiven } from './live.js';

const usage = `usage: ferry snapshot --kubeconfig FILE [--context NAME] -o DIR [--force] [--allow-partial]
                     [--etcd-endpoints URL,... --etcd-cacert FILE --etcd-cert FILE --etcd-key FILE]
                     [--pki DIR] [--mgmt-kubeconfig FILE [--mgmt-context NAME]]
       ferry snapshot --from FILES_DIR -o DIR [--force] [--mgmt-kubeconfig FILE]
       ferry snapshot --print-clusterrole

Captures a live cluster (or assembles one from a files directory, see docs/snapshot-layout.md)
into a snapshot directory, the input of every offline command.

  --kubeconfig FILE       admin kubeconfig (default: $KUBECONFIG)
  --context NAME          kubeconfig context (default: its current-context)
  -o, --output DIR        snapshot directory to write
  --force                 replace DIR if it exists
  --allow-partial         keep the snapshot although the server refused (403) or does not serve
                          (404) something the audit reads: it is marked partial, and the audit
                          skips the rules that need what is missing (default: exit 2, nothing written)
  --print-clusterrole     print the least-privilege RBAC for what the collection reads, and exit
  --etcd-endpoints LIST   etcd client URLs, comma-separated (https://10.0.0.11:2379,...)
  --etcd-cacert FILE      etcd CA (kubeadm: /etc/kubernetes/pki/etcd/ca.crt)
  --etcd-cert FILE        etcd client certificate (kubeadm: pki/etcd/healthcheck-client.crt)
  --etcd-key FILE         its key
  --pki DIR               a copy of /etc/kubernetes/pki to inventory (keys are checked, never stored)
  --from FILES_DIR        assemble from files instead of a live cluster
  --mgmt-kubeconfig FILE  also read the Cluster API management cluster (part "mgmt": its Cluster
                          API objects, CRD versions and Secret names and keys, never values)
  --mgmt-context NAME     its kubeconfig context
`;

const options = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  output: { type: 'string', short: 'o' },
  force: { type: 'boolean' },
  'allow-partial': { type: 'boolean' },
  'print-clusterrole': { type: 'boolean' },
  'etcd-endpoints': { type: 'string' },
  'etcd-cacert': { type: 'string' },
  'etcd-cert': { type: 'string' },
  'etcd-key': { type: 'string' },
  pki: { type: 'string' },
  from: { type: 'string' },
  'mgmt-kubeconfig': { type: 'string' },
  'mgmt-context': { type: 'string' },
} as const;

export const command: Command = {
  name: 'snapshot',
  summary: 'capture a live cluster (and optionally its etcd) into a snapshot directory',
  usage,
  async run(argv, io) {
    const { values, positionals } = parseFlags(argv, options, usage);
    if (positionals.length > 0)
      throw usageError(`unexpected argument "${positionals[0]}"`, `see usage:\n${usage.trim()}`);
    if (values['print-clusterrole'] === true) {
      const given = Object.keys(values).filter((k) => k !== 'print-clusterrole');
      if (given.length > 0)
        throw usageError(
          `--print-clusterrole cannot be combined with ${given.map((f) => `--${f}`).join(', ')}`,
          'run `ferry snapshot --print-clusterrole` alone',
        );
      const { collectionRbac, renderRbac } = await import('../snapshot/rbac.js');
      io.stdout(renderRbac(collectionRbac()));
      return 0;
    }
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
      if (values['allow-partial'] === true)
        throw usageError(
          '--allow-partial applies to a live cluster only',
          'a files directory holds what it holds: drop --allow-partial',
        );
      const live = liveFlagsGiven(values);
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
      // The path as typed, so the saved provenance names files the way the user does.
      const snapshot = await loadSnapshot(values.from, { cwd: io.cwd });
      await withMgmt(snapshot, values, path);
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
    // Streamed: each page goes to the temporary directory as it arrives, so a 150,000-pod cluster
    // is never held whole; any failure leaves no snapshot at all (writeDirAtomic).
    const [{ writeDirAtomic }, { openResourceFiles, writeSnapshotParts }] = await Promise.all([
      import('../util/atomic-write.js'),
      import('../snapshot/store.js'),
    ]);
    let done: { snapshot: Snapshot; what: string; counts: Counts } | undefined;
    await writeDirAtomic(
      out,
      async (tmp) => {
        const files = await openResourceFiles(tmp);
        try {
          const { snapshot, server, context } = await collectLive(kubeconfig, values, io, {
            strictPki: true,
            sink: files,
          });
          await refuseUnobserved(snapshot, values['allow-partial'] === true, io);
          await withMgmt(snapshot, values, path);
          files.close();
          await writeSnapshotParts(snapshot, tmp);
          done = { snapshot, what: `${server} (context ${context})`, counts: { ...files.counts } };
        } catch (err) {
          files.close({ failed: true });
          throw err;
        }
      },
      { force, origin: { flag: '--output' } },
    );
    const { snapshot, what, counts } = done!;
    for (const w of snapshot.manifest.warnings) io.stderr(`warning: ${w}\n`);
    io.stdout(`${summary(snapshot, out, what, counts)}\n`);
    return 0;
  },
};

/**
 * Fail closed: a list or read the audit needs that the server refused or does not serve ends the
 * command with exit 2 (nothing written) naming them, with the RBAC that grants them on stdout. With
 * --allow-partial the snapshot is kept, marked partial; its audit skips the rules that need them.
 */
async function refuseUnobserved(snapshot: Snapshot, allowPartial: boolean, io: Io): Promise<void> {
  if ((snapshot.manifest.unobserved ?? []).length === 0) return;
  const [{ ALL_RULES }, { unobservedForAudit }, rbac, { describeNotObserved }] = await Promise.all([
    import('../audit/rules/index.js'),
    import('../audit/unobserved-gate.js'),
    import('../snapshot/rbac.js'),
    import('../snapshot/model.js'),
  ]);
  const missing = unobservedForAudit(snapshot.manifest, ALL_RULES);
  if (missing.reads.length === 0) return;
  if (allowPartial) {
    snapshot.manifest.partial = true;
    return;
  }
  const forbidden = missing.reads.filter((n) => n.reason === 'forbidden');
  const notServed = missing.reads.filter((n) => n.reason === 'not-served');
  const said: string[] = [];
  if (forbidden.length)
    said.push(`the API server refused (HTTP 403) ${forbidden.map(describeNotObserved).join(', ')}`);
  if (notServed.length)
    said.push(`the API server does not serve (HTTP 404) ${notServed.map(describeNotObserved).join(', ')}`);
  const subject = forbidden.map((n) => rbac.subjectFromForbidden(n.message)).find((x) => x !== undefined);
  if (forbidden.length) io.stdout(rbac.renderRbac(rbac.collectionRbac(subject), subject));
  const source = snapshot.manifest.source;
  throw inputError(
    `${said.join('; ')}: the snapshot would not know ${missing.inputs.join(', ')}, which ${missing.rules.length} audit rule(s) read; no snapshot was written`,
    { object: source.kind === 'live' ? `kubeconfig context ${source.context ?? ''}` : source.path },
    [
      ...(forbidden.length
        ? [
            'grant the reads with the RBAC printed on stdout (ferry snapshot --print-clusterrole prints it too; apply it with an admin kubeconfig: kubectl apply -f FILE), or use an admin kubeconfig',
          ]
        : []),
      'or pass --allow-partial to keep a snapshot marked partial, whose audit skips the rules that need what is missing',
    ].join('; '),
  );
}

/** Objects written per resource file, when they were streamed rather than held. */
type Counts = { nodes: number; pods: number };

/** --mgmt-kubeconfig: the management cluster becomes the snapshot's `mgmt` part. */
async function withMgmt(
  snapshot: Snapshot,
  values: { 'mgmt-kubeconfig'?: string; 'mgmt-context'?: string },
  path: (p: string) => string,
): Promise<void> {
  if (values['mgmt-kubeconfig'] === undefined) {
    if (values['mgmt-context'] !== undefined)
      throw usageError(
        '--mgmt-context needs --mgmt-kubeconfig FILE',
        'name the management cluster kubeconfig too',
      );
    return;
  }
  const [{ readMgmtFromKubeconfig }, { SNAPSHOT_PARTS }] = await Promise.all([
    import('../adapters/capi/mgmt-reader.js'),
    import('../snapshot/validate.js'),
  ]);
  snapshot.mgmt = await readMgmtFromKubeconfig(path(values['mgmt-kubeconfig']), values['mgmt-context']);
  const parts = new Set([...snapshot.manifest.parts, 'mgmt' as const]);
  snapshot.manifest.parts = SNAPSHOT_PARTS.filter((p) => parts.has(p));
}

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

export function summary(s: Snapshot, out: string, what: string, counts?: Counts): string {
  const n = (count: number, word: string) =>
    `${count.toLocaleString('en-US')} ${word}${count === 1 ? '' : 's'}`;
  const parts = [
    n(counts?.nodes ?? s.resources.nodes.length, 'node'),
    n(counts?.pods ?? s.resources.pods.length, 'pod'),
    n(s.staticPods.length, 'static pod'),
    n(s.servedCertificates.filter((c) => c.certificate).length, 'served certificate'),
  ];
  if (s.pki) parts.push(n(s.pki.certificates.length, 'PKI certificate'));
  if (s.etcd) parts.push(`etcd ${n(s.etcd.members.length, 'member')}`);
  if (s.mgmt) parts.push(`management cluster ${n(s.mgmt.objects.length, 'object')}`);
  const warnings = s.manifest.warnings.length;
  const unobserved = [...new Set((s.manifest.unobserved ?? []).map((u) => u.input))];
  const partial = s.manifest.partial
    ? `; partial (--allow-partial): not observed ${unobserved.join(', ')}, the audit skips the rules that need them`
    : '';
  return `snapshot of ${what} written to ${out}: ${parts.join(', ')}${partial}${warnings > 0 ? `; ${n(warnings, 'warning')} (above)` : ''}`;
}
