/**
 * The plan as one self-contained HTML page: inline CSS, no script, no external resource (it is
 * read in rooms without network, and printed). Same content as the Markdown runbook.
 */
import { escapeHtml as esc } from '../util/escape-html.js';
import { describeCommand, describeExpectation, formatSeconds } from './describe.js';
import type { Command } from './expected-state.js';
import { nodeLabel, type Plan, type Step } from './model.js';
import { sameState } from './render-md.js';
import { type RollTable, workerRollView } from './render-workers.js';

function tableHtml(t: RollTable): string {
  return `<table><tr>${t.head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>${t.rows
    .map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`)
    .join('')}</table>`;
}

function workersHtml(plan: Plan): string {
  const v = workerRollView(plan);
  return [
    '<h2 id="workers">Workers</h2>',
    `<p>${esc(v.summary)}</p>`,
    `<p><b>${esc(v.estimate)}</b></p>`,
    list(v.assumptions.map((a) => `assumed: ${a}`)),
    plan.workerRoll.batches.length > 0 ? tableHtml(v.batches) : '',
    v.surged.length > 0 ? `<p>Scaled up around their drains (--surge-replicas):</p>${list(v.surged)}` : '',
    v.blocked.length > 0
      ? `<h3>Blocked PodDisruptionBudgets</h3><p>ferry plan refuses while one of these stands; --surge-replicas applies the fix where scaling up helps.</p>${list(v.blocked)}`
      : '',
    '<h3>Outages</h3>',
    v.outages
      ? `<p>What the roll takes down, and for how long:</p>${tableHtml(v.outages)}`
      : '<p>None: every evicted pod has another replica, or a PodDisruptionBudget keeps enough up.</p>',
  ].join('\n');
}

const CSS = `
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.6rem}h2{margin-top:2.2rem;border-bottom:2px solid #d0d7de;padding-bottom:.2rem}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.6rem .8rem;overflow-x:auto;white-space:pre-wrap}
.cmt{color:#57606a}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.25rem .6rem;text-align:left}
details.step{border:1px solid #d0d7de;border-radius:6px;margin:.5rem 0;padding:.3rem .8rem}
details.step[open]{background:#fcfcfd}
details.step.destructive{border-left:5px solid #cf222e}
summary{cursor:pointer;font-weight:600}
.id{font-weight:400;color:#57606a;font-family:ui-monospace,monospace;font-size:12px;margin-left:.5rem}
.badge{display:inline-block;border-radius:1rem;padding:0 .5rem;font-size:12px;margin-right:.3rem;background:#eaeef2}
.badge.danger{background:#ffebe9;color:#a40e26;font-weight:600}
.warn{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:.5rem 1rem}
.label{font-weight:600;margin:.6rem 0 .2rem}
@media print{details.step{break-inside:avoid}details>summary{list-style:none}}
`;

function pre(cmds: Command[]): string {
  if (cmds.length === 0) return '';
  const body = cmds
    .map((c) => `${c.note ? `<span class="cmt"># ${esc(c.note)}</span>\n` : ''}${esc(describeCommand(c))}`)
    .join('\n');
  return `<pre>${body}</pre>`;
}

function list(items: string[]): string {
  return items.length === 0 ? '' : `<ul>${items.map((i) => `<li>${esc(i)}</li>`).join('')}</ul>`;
}

function section(label: string, body: string): string {
  return body === '' ? '' : `<div class="label">${esc(label)}</div>${body}`;
}

function stepHtml(s: Step): string {
  const badges = [
    s.destructive
      ? '<span class="badge danger">destructive</span>'
      : '<span class="badge">not destructive</span>',
    `<span class="badge">timeout ${esc(formatSeconds(s.timeoutSeconds))}</span>`,
    `<span class="badge">${esc(s.action.performer)}</span>`,
    s.condition ? '<span class="badge">only if the member leads</span>' : '',
    s.optional ? '<span class="badge">optional</span>' : '',
    s.batch !== undefined ? `<span class="badge">batch ${s.batch}</span>` : '',
  ].join('');
  const undo = s.undo.possible
    ? `<p>${esc(s.undo.summary)}</p>${pre(s.undo.commands)}`
    : `<p>Not possible: ${esc(s.undo.reason)}</p>`;
  const check = (sameState(s) ? '' : list(describeExpectation(s.verify.expect))) + pre(s.verify.commands);
  return `<details class="step${s.destructive ? ' destructive' : ''}" id="${esc(s.id)}"${s.destructive ? ' open' : ''}>
<summary>${s.phase}.${String(s.index).padStart(2, '0')} ${esc(s.title)}<span class="id">${esc(s.id)}</span></summary>
<p>${badges}</p>
${section('Before (the gate)', list(describeExpectation(s.expect)))}
${section('Do', `<p>${esc(s.action.summary)}</p>${s.kind === 'manual' ? list(s.params.instructions) : ''}${pre(s.action.commands)}`)}
${section('Check', check)}
${section('Undo', undo)}
${section('If a run was interrupted here', `<p>Done when ${esc(s.idempotencyCheck.description)}; otherwise ${s.idempotencyCheck.ifNotDone === 'redo' ? 'the step is done again' : 'the run stops for you to look'}.</p>`)}
${s.after && s.after.length > 0 ? section('Only after', list(s.after)) : ''}
${s.notes && s.notes.length > 0 ? section('Notes', list(s.notes)) : ''}
</details>`;
}

export function renderPlanHtml(plan: Plan): string {
  const t = plan.target;
  const title = `Migration plan: ${plan.cluster.name ?? 'cluster'} → Talos ${t.talosVersion}`;
  const rows = [
    ...plan.controlPlanes.map(
      (c) =>
        `<tr><td>${c.phase}</td><td>${esc(c.node)}</td><td>${esc(c.address ?? '?')}</td><td>${esc(c.member ? `${c.member.name}${c.leaderAtSnapshot ? ' (leader)' : ''}` : '—')}</td><td>${esc(nodeLabel(c.replacement))}</td></tr>`,
    ),
    ...plan.workers.map(
      (w) =>
        `<tr><td>3 (batch ${w.batch})</td><td>${esc(w.node)}</td><td>${esc(w.address ?? '?')}</td><td>—</td><td>${esc(nodeLabel(w.replacement))}</td></tr>`,
    ),
  ];
  const toc = plan.phases
    .map(
      (p) => `<li><a href="#phase-${p.id}">Phase ${p.id}: ${esc(p.title)}</a> (${p.steps.length} steps)</li>`,
    )
    .join('');
  const phases = plan.phases
    .map(
      (p) =>
        `<h2 id="phase-${p.id}">Phase ${p.id}: ${esc(p.title)}</h2><p>${esc(p.summary)}</p>${p.steps.length === 0 ? '<p>Nothing to do in this phase.</p>' : p.steps.map(stepHtml).join('\n')}`,
    )
    .join('\n');
  const blockers =
    plan.audit.blockers.length === 0
      ? ''
      : `<h2>Blockers</h2><p>${plan.audit.allowBlockers ? 'Accepted with --allow-blockers; the preflight step records them.' : 'The preflight step refuses to go on until these are fixed.'}</p>${list(plan.audit.blockers.map((b) => `${b.ruleId} ${b.subject}: ${b.title}. Fix: ${b.remediation}`))}`;
  const byKit = plan.audit.resolvedByKit ?? [];
  const resolved =
    byKit.length === 0
      ? ''
      : `<h2>Resolved by the kit</h2><p>The kit carries the fix for these findings; its steps and files in this plan apply it.</p>${list(byKit.map((b) => `${b.ruleId} (${b.severity}) ${b.subject}: ${b.title}`))}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>${CSS}</style></head>
<body>
<h1>${esc(title)}</h1>
<p>Strategy <b>${esc(plan.strategy)}</b>, provisioner <b>${esc(plan.provisioner)}</b>, Kubernetes ${esc(t.kubernetesVersion ?? '(unknown)')}, KubePrism ${esc(t.kubeprism)}.
Built by ferry ${esc(plan.ferryVersion)} at ${esc(plan.createdAt)} from <code>${esc(plan.source.snapshot)}</code> (taken ${esc(plan.source.snapshotCreatedAt)}, <code>${esc(plan.source.snapshotDigest)}</code>)${plan.source.kit ? ` and the kit <code>${esc(plan.source.kit.path)}</code>` : ', without a kit'}.
Plan digest <code>${esc(plan.integrity.digest)}</code>: <code>ferry run</code> refuses a plan.json whose content does not match it.</p>
<p>Run it with <code>ferry run</code>, or follow it by hand. Commands marked <code>[on NODE]</code> run as root on that node; the others on a workstation with the setup below. Destructive steps are open and marked red.</p>
${plan.warnings.length > 0 ? `<div class="warn"><b>Warnings</b>${list(plan.warnings)}</div>` : ''}
<h2>Order</h2>
<table><tr><th>phase</th><th>node</th><th>address</th><th>etcd member</th><th>replaced by</th></tr>${rows.join('')}</table>
<p>etcd: ${plan.etcd.voters} voters${plan.etcd.leader ? `, leader ${esc(plan.etcd.leader.name)}` : ''}${plan.etcd.version ? `, version ${esc(plan.etcd.version)}` : ''}.</p>
${workersHtml(plan)}
${resolved}${blockers}
<h2>Contents</h2><ol start="0">${toc}</ol>
<h2>Setup</h2>${pre(plan.setup)}
${phases}
</body></html>
`;
}
