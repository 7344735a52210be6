import { resolve } from 'node:path';
import { DEFAULT_SUPPRESSIONS_FILE, readSuppressions } from '../audit/suppressions.js';
import { type ExitCode, FerryError, usageError } from '../errors.js';
import {
  TARGET_FLAG_OPTIONS,
  TARGET_FLAGS_USAGE,
  type Target,
  type TargetInput,
  targetInputFromFlags,
} from '../facts/target.js';
import { targetDifferences } from '../kit/match.js';
import type { KitContents, KitSummary } from '../kit/read.js';
import { STRATEGIES, type WorkerRoll } from '../plan/model.js';
import { oneOf, onlyOne, parseFlags, wholeNumber } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';

const usage = `usage: ferry plan SNAPSHOT [--kit KIT] [--strategy surge|replace] [-o FILE] [flags] [target flags]

Builds the migration plan for the cluster in SNAPSHOT: phases of typed steps, each with the state
it expects before it runs, its action and the commands an operator would type, its check, its
timeout, whether it is destructive, how to undo it and how a resumed run tells it already happened.
Nothing in the cluster changes; \`ferry run PLAN\` executes plan.json. The preflight runs the audit:
with an unsuppressed blocker ferry plan refuses (exit 1), unless --allow-blockers.

Workers go in computed batches: a batch holds only workers whose pods can all go at once within
every PodDisruptionBudget and fit on the workers that stay (requests, taints, selectors, affinity,
spreading). The plan explains each batch's size, lists the outages the roll causes (single
replicas, pods without a controller, pods no node can take) and prints its estimate next to a
lower bound. A PodDisruptionBudget that allows no disruption makes ferry plan refuse (exit 1).

  --kit KIT                the kit written by ferry generate: its kubeadm-side steps and files become
                           the preparation phase, its target is the default target, and
                           findings it resolves (as \`ferry audit --kit\` shows) are no blockers
  --strategy S             surge (default): a new node at a new address joins, then the old one leaves
                           replace: the old node leaves, a Talos node comes back at the same address
  -o, --output FILE        plan.json | plan.md | plan.html (format from the extension; default: md on stdout)
  --format F               json | md | html
  --allow-blockers         plan anyway; the preflight step records the accepted blockers
  --suppressions FILE      accepted findings (default ${DEFAULT_SUPPRESSIONS_FILE} when it exists)
  --max-unavailable N|P%   at most N workers (or P% of them, rounded down, at least 1) per batch
                           (default 25%)
  --surge N                bring N more Talos workers up before the first drain, so batches can grow;
                           each is assumed shaped like the largest pool (they stay after the roll)
  --surge-replicas         for a workload whose PodDisruptionBudget allows no disruption: scale it
                           up by one before its first worker drains, back after its last (a stopped
                           run scales it back); without it, ferry plan refuses naming the budget
  --fail-on-outage         refuse (exit 1) when the worker roll would take anything down
  --drain-timeout SECONDS  per-node drain timeout (default 900)
${TARGET_FLAGS_USAGE}

Exit codes: 0 plan written; 1 refused: the audit has unsuppressed blockers (as \`ferry audit
--fail-on blocker\`; fix, suppress with a reason, or pass --allow-blockers), a PodDisruptionBudget
allows no disruption (fix it or pass --surge-replicas), or --fail-on-outage and the roll has
outages; nothing is written; 2 bad usage or input (nothing can be planned: say what is missing);
4 internal error (an audit rule failed).
`;

const options = {
  kit: { type: 'string' },
  strategy: { type: 'string' },
  output: { type: 'string', short: 'o' },
  format: { type: 'string' },
  'allow-blockers': { type: 'boolean' },
  suppressions: { type: 'string' },
  'max-unavailable': { type: 'string' },
  surge: { type: 'string' },
  'surge-replicas': { type: 'boolean' },
  'fail-on-outage': { type: 'boolean' },
  'drain-timeout': { type: 'string' },
  ...TARGET_FLAG_OPTIONS,
} as const;

export const command: Command = {
  name: 'plan',
  summary: 'build the migration plan and runbook: phases of typed, gated, undoable steps',
  usage,
  async run(argv: string[], io: Io): Promise<ExitCode> {
    const { values, positionals } = parseFlags(argv, options, usage);
    const snapshotArg = onlyOne(positionals, 'SNAPSHOT (a snapshot directory)', usage);
    const path = (p: string) => resolve(io.cwd, p);
    const strategy = oneOf('strategy', values.strategy, STRATEGIES, 'surge');
    const { formatFor, renderPlan } = await import('../plan/render.js');
    const format = formatFor(values.output, values.format);
    const { parseMaxUnavailable } = await import('../plan/batches/limits.js');
    const maxUnavailable =
      values['max-unavailable'] === undefined ? undefined : parseMaxUnavailable(values['max-unavailable']);
    const surgeWorkers = wholeNumber('surge', values.surge, { min: 0 });
    const surgeReplicas = values['surge-replicas'] === true;
    const drainTimeoutSeconds = wholeNumber('drain-timeout', values['drain-timeout'], {
      min: 1,
      unit: 'seconds',
    });
    const flagTarget = targetInputFromFlags(values);

    // The kit's contents too: findings it resolves are no blockers for this plan, as in `audit --kit`.
    let kitContents: KitContents | null = null;
    if (values.kit !== undefined) {
      const { readKitContents } = await import('../kit/read.js');
      kitContents = await readKitContents(path(values.kit), values.kit);
    }
    const kit: KitSummary | null = kitContents?.summary ?? null;
    const [{ loadSnapshot }, { deriveFacts }, { runAudit }, { ALL_RULES }, { CATALOG_IDS }] =
      await Promise.all([
        import('../snapshot/load.js'),
        import('../facts/derive.js'),
        import('../audit/engine.js'),
        import('../audit/rules/index.js'),
        import('../knowledge/rule-catalog.js'),
      ]);
    const suppressions = await readSuppressions(values.suppressions, io.cwd, [
      ...new Set([...CATALOG_IDS, ...ALL_RULES.map((r) => r.id)]),
    ]);
    const snapshot = await loadSnapshot(path(snapshotArg), { strictPki: false });
    const { refuseUnobserved } = await import('../snapshot/unobserved.js');
    refuseUnobserved(snapshot, 'ferry plan', snapshotArg);
    const facts = deriveFacts(snapshot, kit ? { ...kitTarget(kit), ...flagTarget } : flagTarget);
    if (kit) checkKitTarget(kit, facts.target);
    // No plan exists for an external etcd: exit 2 before the audit gate, which would say exit 1.
    const { refuseExternalEtcd } = await import('../plan/topology.js');
    refuseExternalEtcd(facts);

    const now = new Date();
    const audit = runAudit({
      snapshot,
      facts,
      target: facts.target,
      rules: ALL_RULES,
      suppressions,
      ...(kitContents ? { kit: kitContents } : {}),
      now,
    });
    if (audit.errors.length > 0) {
      for (const e of audit.errors) io.stderr(`error: rule ${e.ruleId} failed: ${e.message}\n`);
      throw new FerryError('internal', 'the preflight audit did not complete: no plan written', {
        remediation: 'report the failing rule; `ferry audit` on the same snapshot shows it',
      });
    }
    const { buildPlan, planBlockers } = await import('../plan/build.js');
    const blockers = planBlockers({ snapshot, facts, audit }).refused;
    const allowBlockers = values['allow-blockers'] === true;
    if (blockers.length > 0 && !allowBlockers) {
      io.stderr(
        `ferry plan refuses: the audit has ${blockers.length} unsuppressed blocker(s); no plan written\n`,
      );
      for (const b of blockers)
        io.stderr(`  blocker ${b.ruleId}: ${b.subject}: ${b.title}\n    fix: ${b.remediation}\n`);
      io.stderr(
        `fix them, accept them with a reason in ${DEFAULT_SUPPRESSIONS_FILE} (--suppressions), or pass --allow-blockers to plan anyway\n`,
      );
      return 1;
    }

    const plan = buildPlan({
      snapshot,
      facts,
      audit,
      snapshotPath: snapshotArg,
      strategy,
      kit,
      allowBlockers,
      now,
      options: {
        ...(maxUnavailable !== undefined ? { maxUnavailable } : {}),
        ...(surgeWorkers !== undefined ? { surgeWorkers } : {}),
        surgeReplicas,
        ...(drainTimeoutSeconds !== undefined ? { drainTimeoutSeconds } : {}),
      },
    });
    const { workerRefusals } = await import('../plan/refusals.js');
    const refusals = workerRefusals(plan.workerRoll, { failOnOutage: values['fail-on-outage'] === true });
    if (refusals.length > 0) {
      for (const r of refusals) {
        io.stderr(`ferry plan refuses: ${r.title}; no plan written\n`);
        for (const l of r.lines) io.stderr(`  ${l}\n`);
        io.stderr(`${r.remedy}\n`);
      }
      return 1;
    }
    const text = renderPlan(plan, format);
    for (const w of plan.warnings) io.stderr(`warning: ${w}\n`);
    if (values.output === undefined) {
      io.stdout(text);
      return 0;
    }
    const { writeFileAtomic } = await import('../util/atomic-write.js');
    await writeFileAtomic(path(values.output), text, { origin: { flag: '--output', shown: values.output } });
    const steps = plan.phases.flatMap((p) => p.steps);
    const destructive = steps.filter((s) => s.destructive).length;
    io.stdout(
      `${format} plan written to ${values.output}: ${steps.length} steps in ${plan.phases.length} phases (${destructive} destructive), ` +
        `strategy ${plan.strategy}, provisioner ${plan.provisioner}, Talos ${plan.target.talosVersion}` +
        `${plan.audit.blockers.length > 0 ? `, ${plan.audit.blockers.length} blocker(s) accepted` : ''}` +
        `; workers: ${workerLine(plan.workerRoll)}\n`,
    );
    return 0;
  },
};

function workerLine(r: WorkerRoll): string {
  const e = r.estimate;
  return `${r.batches.length} batch(es), estimate ${e.seconds} s, lower bound ${e.lowerBoundSeconds} s, ${r.outages.length} outage(s)`;
}

/** The kit's target as defaults: a plan for the kit that exists, unless a flag says otherwise. */
function kitTarget(kit: KitSummary): TargetInput {
  const t = kit.target;
  const out: TargetInput = {};
  if (t.talosVersion) out.talosVersion = t.talosVersion;
  if (t.kubernetesVersion) out.kubernetesVersion = t.kubernetesVersion;
  if (t.kubeprism === 'on' || t.kubeprism === 'off') out.kubeprism = t.kubeprism;
  if (t.provisioner === 'manual' || t.provisioner === 'exec' || t.provisioner === 'capi')
    out.provisioner = t.provisioner;
  if (t.infra === 'generic' || t.infra === 'proxmox' || t.infra === 'vsphere') out.infra = t.infra;
  return out;
}

/**
 * A plan must target what the kit was generated for: its machine configs and scripts assume it.
 * The same comparison as `ferry audit --kit`, the infrastructure included.
 */
function checkKitTarget(kit: KitSummary, target: Target): void {
  const diff = targetDifferences(kit, target);
  if (diff.length === 0) return;
  throw usageError(
    `the kit at ${kit.path} was generated for ${diff.map((d) => `--${d.flag} ${d.kit} (the plan would use ${d.now})`).join(', ')}`,
    `drop ${diff.map((d) => `--${d.flag}`).join(', ')} (the kit's values are the defaults), or generate the kit again for ${diff.map((d) => d.now).join(', ')}`,
  );
}
