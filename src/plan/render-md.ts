/**
 * The plan as a Markdown runbook: what to check, what to type, how to tell it worked, how to undo
 * it, in the order `ferry run` would do it. Same content as the HTML rendering.
 */
import { describeCommand, describeExpectation, formatSeconds } from './describe.js';
import type { Command } from './expected-state.js';
import { nodeLabel, type Plan, type Step } from './model.js';
import { type RollTable, workerRollView } from './render-workers.js';

function table(t: RollTable): string[] {
  const cell = (c: string) => c.replace(/\|/g, '\\|');
  return [
    `| ${t.head.join(' | ')} |`,
    `|${t.head.map(() => '---').join('|')}|`,
    ...t.rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ];
}

function workersMd(plan: Plan): string[] {
  const v = workerRollView(plan);
  const lines = [
    '## Workers',
    '',
    v.summary,
    '',
    `**${v.estimate}**`,
    '',
    ...bullets(v.assumptions.map((a) => `assumed: ${a}`)),
    '',
  ];
  if (plan.workerRoll.batches.length > 0) lines.push(...table(v.batches), '');
  if (v.surged.length > 0)
    lines.push('Scaled up around their drains (`--surge-replicas`):', '', ...bullets(v.surged), '');
  if (v.blocked.length > 0)
    lines.push(
      '### Blocked PodDisruptionBudgets',
      '',
      '`ferry plan` refuses while one of these stands; `--surge-replicas` applies the fix where scaling up helps.',
      '',
      ...bullets(v.blocked),
      '',
    );
  lines.push('### Outages', '');
  if (v.outages) lines.push('What the roll takes down, and for how long:', '', ...table(v.outages), '');
  else
    lines.push('None: every evicted pod has another replica, or a PodDisruptionBudget keeps enough up.', '');
  return lines;
}

function fence(cmds: Command[]): string[] {
  if (cmds.length === 0) return [];
  const lines = ['```sh'];
  for (const c of cmds) {
    if (c.note) lines.push(`# ${c.note}`);
    lines.push(describeCommand(c));
  }
  lines.push('```');
  return lines;
}

function bullets(items: string[]): string[] {
  return items.map((i) => `- ${i}`);
}

const PERFORMER: Record<Step['action']['performer'], string> = {
  ferry: 'ferry',
  provisioner: 'the provisioner',
  'load-balancer': 'the load-balancer command (--lb-cmd), else you',
  operator: 'you',
};

export function sameState(s: Step): boolean {
  return JSON.stringify(s.expect) === JSON.stringify(s.verify.expect);
}

export function renderStepMd(s: Step): string[] {
  const flags = [
    s.destructive ? '**DESTRUCTIVE**' : 'not destructive',
    `timeout ${formatSeconds(s.timeoutSeconds)}`,
    `done by ${PERFORMER[s.action.performer]}`,
    ...(s.condition === 'if-member-leads' ? ['only if that member leads at run time'] : []),
    ...(s.optional ? ['optional'] : []),
    ...(s.batch !== undefined ? [`batch ${s.batch}`] : []),
  ];
  const lines = [
    `### ${s.phase}.${String(s.index).padStart(2, '0')} ${s.title}`,
    '',
    `\`${s.id}\` · ${flags.join(' · ')}`,
    '',
  ];
  const pre = describeExpectation(s.expect);
  if (pre.length > 0) lines.push('**Before** (the gate):', '', ...bullets(pre), '');
  lines.push(`**Do**: ${s.action.summary}`, '', ...fence(s.action.commands));
  if (s.action.commands.length > 0) lines.push('');
  if (s.kind === 'manual' && s.params.instructions.length > 0)
    lines.push(...bullets(s.params.instructions), '');
  // A gate checks the same state before and after: say it once.
  const post = sameState(s) ? [] : describeExpectation(s.verify.expect);
  if (post.length > 0 || s.verify.commands.length > 0) {
    lines.push('**Check**:', '', ...bullets(post));
    if (post.length > 0) lines.push('');
    lines.push(...fence(s.verify.commands));
    if (s.verify.commands.length > 0) lines.push('');
  }
  if (s.undo.possible) {
    lines.push(`**Undo**: ${s.undo.summary}`, '', ...fence(s.undo.commands));
    if (s.undo.commands.length > 0) lines.push('');
  } else lines.push(`**Undo**: not possible: ${s.undo.reason}`, '');
  lines.push(
    `**If a run was interrupted here**: done when ${s.idempotencyCheck.description}; otherwise ${s.idempotencyCheck.ifNotDone === 'redo' ? 'the step is done again' : 'the run stops for you to look'}.`,
    '',
  );
  if (s.after && s.after.length > 0)
    lines.push(`Only after: ${s.after.map((a) => `\`${a}\``).join(', ')}`, '');
  if (s.notes && s.notes.length > 0) lines.push(...bullets(s.notes.map((n) => `note: ${n}`)), '');
  return lines;
}

export function renderPlanMd(plan: Plan): string {
  const t = plan.target;
  const lines: string[] = [
    `# Migration plan: ${plan.cluster.name ?? 'cluster'} → Talos ${t.talosVersion}`,
    '',
    `Strategy **${plan.strategy}**, provisioner **${plan.provisioner}**, Kubernetes ${t.kubernetesVersion ?? '(unknown)'}, KubePrism ${t.kubeprism}. ` +
      `Built by ferry ${plan.ferryVersion} at ${plan.createdAt} from \`${plan.source.snapshot}\` (taken ${plan.source.snapshotCreatedAt}, ${plan.source.snapshotDigest})` +
      `${plan.source.kit ? ` and the kit \`${plan.source.kit.path}\`` : ', without a kit'}. Plan format ${plan.formatVersion}, digest \`${plan.integrity.digest}\`: \`ferry run\` refuses a plan.json whose content does not match it.`,
    '',
    'Run it with `ferry run`, or follow it by hand: every step says what must hold before it, what to type, how to check it, and how to undo it. Commands marked `[on NODE]` run as root on that node; the others on a workstation with the setup below.',
    '',
  ];
  if (plan.warnings.length > 0) lines.push('## Warnings', '', ...bullets(plan.warnings), '');
  lines.push(
    '## Order',
    '',
    '| phase | node | address | etcd member | replaced by |',
    '|---|---|---|---|---|',
  );
  for (const c of plan.controlPlanes) {
    lines.push(
      `| ${c.phase} | ${c.node} | ${c.address ?? '?'} | ${c.member ? `${c.member.name}${c.leaderAtSnapshot ? ' (leader)' : ''}` : '—'} | ${nodeLabel(c.replacement)}${c.replacement.address ? ` at ${c.replacement.address}` : ''} |`,
    );
  }
  for (const w of plan.workers) {
    lines.push(
      `| 3 (batch ${w.batch}) | ${w.node} | ${w.address ?? '?'} | — | ${nodeLabel(w.replacement)} |`,
    );
  }
  lines.push(
    '',
    `etcd: ${plan.etcd.voters} voters${plan.etcd.leader ? `, leader ${plan.etcd.leader.name}` : ''}${plan.etcd.version ? `, version ${plan.etcd.version}` : ''}.`,
    '',
  );
  lines.push(...workersMd(plan));
  const byKit = plan.audit.resolvedByKit ?? [];
  if (byKit.length > 0) {
    lines.push(
      '## Resolved by the kit',
      '',
      'The kit carries the fix for these findings; its steps and files in this plan apply it:',
      '',
      ...bullets(byKit.map((b) => `\`${b.ruleId}\` (${b.severity}) ${b.subject}: ${b.title}`)),
      '',
    );
  }
  if (plan.audit.blockers.length > 0) {
    lines.push(
      '## Blockers',
      '',
      plan.audit.allowBlockers
        ? 'Accepted with `--allow-blockers`; the preflight step records them:'
        : 'The preflight step refuses to go on until these are fixed:',
      '',
      ...bullets(
        plan.audit.blockers.map((b) => `\`${b.ruleId}\` ${b.subject}: ${b.title}. Fix: ${b.remediation}`),
      ),
      '',
    );
  }
  lines.push('## Setup', '', ...fence(plan.setup), '');
  for (const p of plan.phases) {
    lines.push(`## Phase ${p.id}: ${p.title}`, '', p.summary, '');
    if (p.steps.length === 0) lines.push('Nothing to do in this phase.', '');
    for (const s of p.steps) lines.push(...renderStepMd(s));
  }
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
