import { resolve } from 'node:path';
import { DEFAULT_REPORT_FORMAT, REPORT_FORMATS, REPORTERS, renderReport } from '../audit/reporters/index.js';
import { DEFAULT_SUPPRESSIONS_FILE, readSuppressions } from '../audit/suppressions.js';
import { type ExitCode, FerryError, inputError, usageError } from '../errors.js';
import type { Target } from '../facts/target.js';
import { TARGET_FLAG_OPTIONS, TARGET_FLAGS_USAGE, targetInputFromFlags } from '../facts/target.js';
import type { KitContents } from '../kit/read.js';
import type { Snapshot } from '../snapshot/model.js';
import { oneOf, parseFlags } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';
import { collectLive, liveFlagsGiven } from './live.js';

const FAIL_ON = ['blocker', 'risk', 'info', 'never'] as const;

/** One line per registered reporter, so --help offers exactly what -o accepts. */
const formatLines = REPORT_FORMATS.map(
  (f) =>
    `                             ${f.padEnd(6)} ${REPORTERS[f].what}${f === DEFAULT_REPORT_FORMAT ? ' (default)' : ''}`,
).join('\n');

const usage = `usage: ferry audit SNAPSHOT [flags]
       ferry audit --kubeconfig FILE [--context NAME] [--pki DIR] [etcd flags] [flags]

Finds what would break a kubeadm -> Talos migration, before anything changes. SNAPSHOT is a saved
snapshot or a files directory (docs/snapshot-layout.md); --kubeconfig audits a live cluster.
Rules whose inputs are missing, or were not observed (the server refused or does not serve their
list), are reported as skipped, with what to provide.

output:
  -o, --output FORMAT      the report format, one of:
${formatLines}
  --output-file FILE       write the report to FILE (atomically) instead of stdout
  --expand RULE            list every object of RULE in the table, md and html reports (which
                           show the first 20 of each rule); repeatable. json and yaml list all
  --fail-on LEVEL          blocker (default) | risk | info | never: exit 1 when a reported
                           finding is at or above LEVEL, or a rule at or above it could not
                           read its inputs (the server refused them: not observed is not passed)
suppressions and baseline:
  --suppressions FILE      accepted findings: rule, scope, reason, expires
                           (default ${DEFAULT_SUPPRESSIONS_FILE} when it exists)
  --baseline FILE          report only findings whose fingerprint is not in FILE
  --write-baseline FILE    record the current findings' fingerprints in FILE
kit:
  --kit KIT                a kit written by \`ferry generate\` for this cluster and target: findings
                           its files fix (checked in them, not assumed) are reported apart as
                           "resolved by the kit" and do not count toward --fail-on
live cluster:
  --kubeconfig FILE        admin kubeconfig
  --context NAME           kubeconfig context (default: its current-context)
  --pki DIR                a copy of /etc/kubernetes/pki (keys are checked, never stored)
  --etcd-endpoints LIST --etcd-cacert FILE --etcd-cert FILE --etcd-key FILE
                           read etcd members, status and versions
${TARGET_FLAGS_USAGE}

Exit codes: 0 ok; 1 findings at or above --fail-on (not counting those the kit resolves); 2 bad
usage or input (a --kit that is missing, unreadable, not a ferry kit or for another target);
4 internal error (a rule failed: the report says which).
`;

const options = {
  output: { type: 'string', short: 'o' },
  'output-file': { type: 'string' },
  'fail-on': { type: 'string' },
  expand: { type: 'string', multiple: true },
  suppressions: { type: 'string' },
  baseline: { type: 'string' },
  'write-baseline': { type: 'string' },
  kit: { type: 'string' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  pki: { type: 'string' },
  'etcd-endpoints': { type: 'string' },
  'etcd-cacert': { type: 'string' },
  'etcd-cert': { type: 'string' },
  'etcd-key': { type: 'string' },
  ...TARGET_FLAG_OPTIONS,
} as const;

type Values = ReturnType<typeof parseFlags<typeof options>>['values'];

export const command: Command = {
  name: 'audit',
  summary: 'find what would break the migration: blockers, risks, with evidence and fixes',
  usage,
  async run(argv, io) {
    const { values, positionals } = parseFlags(argv, options, usage);
    const format = oneOf('output', values.output, REPORT_FORMATS, DEFAULT_REPORT_FORMAT);
    const failOn = oneOf('fail-on', values['fail-on'], FAIL_ON, 'blocker');
    const targetInput = targetInputFromFlags(values);
    const path = (p: string) => resolve(io.cwd, p);
    if (positionals.length > 1)
      throw usageError(`unexpected argument "${positionals[1]}"`, `see usage:\n${usage.trim()}`);

    const [{ runAuditDetailed, failsAt, unobservedAt }, { ALL_RULES }, { validateRules }, { CATALOG_IDS }] =
      await Promise.all([
        import('../audit/engine.js'),
        import('../audit/rules/index.js'),
        import('../audit/rule.js'),
        import('../knowledge/rule-catalog.js'),
      ]);
    const ruleProblems = validateRules(ALL_RULES);
    if (ruleProblems.length) throw new FerryError('internal', `invalid rule set: ${ruleProblems.join('; ')}`);

    // Inputs that can be wrong are read before the (possibly long) live collection.
    const knownIds = [...new Set([...CATALOG_IDS, ...ALL_RULES.map((r) => r.id)])];
    const expand = values.expand ?? [];
    const ruleIds = new Set(ALL_RULES.map((r) => r.id));
    for (const id of expand)
      if (!ruleIds.has(id))
        throw usageError(
          `--expand ${id}: no such rule`,
          'give a rule id as the reports print it (e.g. --expand workload.pdb-missing); docs/rules.md lists them',
        );
    const suppressions = await readSuppressions(values.suppressions, io.cwd, knownIds);
    let baseline: { file: string; fingerprints: ReadonlySet<string> } | undefined;
    if (values.baseline !== undefined) {
      const { loadBaseline } = await import('../audit/baseline.js');
      baseline = {
        file: values.baseline,
        fingerprints: await loadBaseline(path(values.baseline), values.baseline),
      };
    }

    const kit = values.kit === undefined ? undefined : await readKitFlag(values.kit, io);

    const snapshot = await readSnapshot(values, positionals[0], io);
    const { deriveFacts } = await import('../facts/derive.js');
    const facts = deriveFacts(snapshot, targetInput);
    if (kit) await checkKitTarget(kit, values.kit ?? '', facts.target);
    const now = new Date();
    const { report, unsuppressed } = runAuditDetailed({
      snapshot,
      facts,
      target: facts.target,
      rules: ALL_RULES,
      suppressions,
      ...(baseline ? { baseline } : {}),
      ...(kit ? { kit } : {}),
      now,
    });

    const outputFile = values['output-file'];
    const text = renderReport(report, format, {
      color: io.isTTY && outputFile === undefined && format === 'table',
      expand,
    });
    if (outputFile !== undefined) {
      const { writeFileAtomic } = await import('../util/atomic-write.js');
      await writeFileAtomic(path(outputFile), text, { origin: { flag: '--output-file', shown: outputFile } });
      const { summaryLine } = await import('../audit/reporters/common.js');
      io.stdout(`${format} report written to ${outputFile}: ${summaryLine(report)}\n`);
    } else {
      io.stdout(text);
    }
    if (values['write-baseline'] !== undefined) {
      const { writeBaseline } = await import('../audit/baseline.js');
      await writeBaseline(path(values['write-baseline']), unsuppressed, now, values['write-baseline']);
      io.stderr(`baseline of ${unsuppressed.length} finding(s) written to ${values['write-baseline']}\n`);
    }
    for (const e of report.errors) io.stderr(`error: rule ${e.ruleId} failed: ${e.message}\n`);
    const unread = unobservedAt(report, failOn);
    if (unread.length > 0)
      io.stderr(
        `not passed: ${unread.length} rule(s) at or above --fail-on ${failOn} could not read their inputs (${unread.join(', ')}): what they would find is unknown; the report says what to grant (ferry snapshot --print-clusterrole)\n`,
      );
    const code: ExitCode = report.errors.length > 0 ? 4 : failsAt(report, failOn) ? 1 : 0;
    return code;
  },
};

async function readKitFlag(dir: string, io: Io): Promise<KitContents> {
  const { readKitContents } = await import('../kit/read.js');
  return readKitContents(resolve(io.cwd, dir), dir);
}

/** A kit for another target has other files (another config format, other paths): refuse it. */
async function checkKitTarget(kit: KitContents, shown: string, target: Target): Promise<void> {
  const { targetMismatch } = await import('../kit/match.js');
  const diff = targetMismatch(kit.summary, target);
  if (diff.length > 0)
    throw inputError(
      `the kit ${shown} was generated for another target: ${diff.join(', ')}`,
      { file: `${shown}/provenance.json`, field: 'target' },
      'pass the target flags ferry generate was given (--talos-version, --kubernetes-version, --kubeprism, --provisioner, --infra), or generate the kit again for this target',
    );
}

async function readSnapshot(values: Values, positional: string | undefined, io: Io): Promise<Snapshot> {
  const live = liveFlagsGiven(values);
  if (positional !== undefined) {
    if (live.length > 0)
      throw usageError(
        `SNAPSHOT cannot be combined with ${live.map((f) => `--${f}`).join(', ')}`,
        'audit either a snapshot directory or a live cluster (--kubeconfig)',
      );
    const { loadSnapshot } = await import('../snapshot/load.js');
    // PKI problems (missing CA key, mismatched or encrypted key) are findings here, not errors.
    // The path stays as typed, so evidence names files the way the user does.
    return loadSnapshot(positional, { strictPki: false, cwd: io.cwd });
  }
  if (values.kubeconfig === undefined)
    throw usageError(
      'missing SNAPSHOT (or --kubeconfig FILE for a live cluster)',
      `see usage:\n${usage.trim()}`,
    );
  // Live mode: the same collection as `ferry snapshot`, kept in memory; PKI problems are findings.
  return (await collectLive(values.kubeconfig, values, io, { strictPki: false })).snapshot;
}
