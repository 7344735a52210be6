/** An UpgradePlan as JSON, Markdown or one self-contained HTML page (pure). */
import { stringify } from 'yaml';
import { roughly } from '../plan/batches/explain.js';
import { escapeHtml as esc } from '../util/escape-html.js';
import { blockerExit, describeBlocker } from './blockers.js';
import type { UpgradePlan, Write } from './model.js';

export type UpgradeFormat = 'json' | 'md' | 'html';

export function upgradeFormatFor(file: string): UpgradeFormat | undefined {
  if (file.endsWith('.json')) return 'json';
  if (file.endsWith('.md')) return 'md';
  if (file.endsWith('.html')) return 'html';
  return undefined;
}

export function renderUpgradePlan(plan: UpgradePlan, format: UpgradeFormat): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(
        {
          ...plan,
          blockers: plan.blockers.map((b) => ({ ...b, ...describeBlocker(b), exit: blockerExit(b) })),
        },
        null,
        2,
      )}\n`;
    case 'md':
      return renderMd(plan);
    case 'html':
      return renderHtml(plan);
  }
}

function writeLine(w: Write, n: number): string[] {
  switch (w.kind) {
    case 'create':
      return [
        `${n}. create ${w.object.kind} ${w.object.metadata.namespace}/${w.object.metadata.name}: ${w.why}`,
        '',
        '   ```yaml',
        ...stringify(w.object)
          .trimEnd()
          .split('\n')
          .map((l) => `   ${l}`),
        '   ```',
      ];
    case 'patch':
      return [`${n}. patch ${w.target} (merge): ${w.why}`, `   \`${JSON.stringify(w.patch)}\``];
    case 'delete':
      return [`${n}. delete ${w.target}: ${w.why}`];
    case 'scale-workload':
      return [`${n}. scale ${w.workload} to ${w.replicas} (workload cluster): ${w.why}`];
    case 'wait':
      return [`${n}. wait: ${w.what} (about ${roughly(w.seconds)})`];
  }
}

function renderMd(p: UpgradePlan): string {
  const target = `${p.target.kind === 'kubernetes' ? 'Kubernetes' : 'Talos'} ${p.target.version}`;
  const out = [
    `# Upgrade plan: Cluster ${p.cluster} to ${target}`,
    '',
    `Now: Kubernetes ${p.current.kubernetes || '(unknown)'}, Talos ${p.current.talos ?? '(unknown)'} (from ${p.current.talosSource}).`,
    `${p.stages.length} stage(s), about ${roughly(p.seconds)} in all. Nothing has been changed; this is a plan.`,
    '',
  ];
  if (p.blockers.length > 0) {
    out.push('## Blockers', '');
    for (const b of p.blockers) {
      const t = describeBlocker(b);
      out.push(
        `- **${t.title}** (\`${b.kind}\`): ${t.detail}`,
        `  - fix: ${t.remediation.split('\n').join('\n    ')}`,
      );
    }
    out.push('');
  }
  if (p.warnings.length > 0) out.push('## Warnings', '', ...p.warnings.map((w) => `- ${w}`), '');
  for (const s of p.stages) {
    out.push(
      `## Stage ${s.index}: ${s.kind === 'kubernetes' ? 'Kubernetes' : 'Talos'} ${s.from} → ${s.to} (about ${roughly(s.seconds)})`,
      '',
      `Version from ${s.versionSource}.`,
      '',
      `Control plane ${s.controlPlane.name}: ${s.controlPlane.replicas} Machine(s), one at a time (about ${roughly(s.controlPlane.seconds)}).`,
      '',
    );
    if (s.pools.length > 0) {
      out.push(
        '| pool | replicas | maxSurge | maxUnavailable | estimate | why |',
        '|---|---|---|---|---|---|',
      );
      for (const pool of s.pools)
        out.push(
          `| ${pool.name} | ${pool.replicas} | ${pool.maxSurge} | ${pool.maxUnavailable} | ${roughly(pool.seconds)} | ${pool.why} |`,
        );
      out.push('');
      const outages = s.pools.flatMap((pool) => pool.outages.map((o) => `- ${pool.name}: ${o}`));
      if (outages.length) out.push('Outages the drains cause:', '', ...outages, '');
    }
    out.push('Writes, in order (each pool only after the one before it has rolled):', '');
    s.writes.forEach((w, i) => {
      out.push(...writeLine(w, i + 1));
    });
    out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

function writeHtml(w: Write): string {
  switch (w.kind) {
    case 'create':
      return `create ${esc(`${w.object.kind} ${w.object.metadata.namespace}/${w.object.metadata.name}`)}: ${esc(w.why)}<pre>${esc(stringify(w.object))}</pre>`;
    case 'patch':
      return `patch ${esc(w.target)} (merge): ${esc(w.why)}<pre>${esc(JSON.stringify(w.patch, null, 2))}</pre>`;
    case 'delete':
      return `delete ${esc(w.target)}: ${esc(w.why)}`;
    case 'scale-workload':
      return `scale ${esc(w.workload)} to ${w.replicas} (workload cluster): ${esc(w.why)}`;
    case 'wait':
      return `<i>wait</i>: ${esc(w.what)} (about ${esc(roughly(w.seconds))})`;
  }
}

// Inline style, no script, no external resource: read offline and printed, like the migration plan.
const STYLE =
  'body{font-family:sans-serif;max-width:70em;margin:2em auto;line-height:1.4}pre{background:#f4f4f4;padding:.5em;overflow:auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}.blocker{color:#a00}';

function renderHtml(p: UpgradePlan): string {
  const target = `${p.target.kind === 'kubernetes' ? 'Kubernetes' : 'Talos'} ${p.target.version}`;
  const title = `Upgrade plan: Cluster ${p.cluster} to ${target}`;
  const out = [
    `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title><style>${STYLE}</style></head><body>`,
    `<h1>${esc(title)}</h1>`,
    `<p>Now: Kubernetes ${esc(p.current.kubernetes || '(unknown)')}, Talos ${esc(p.current.talos ?? '(unknown)')} (from ${esc(p.current.talosSource)}). ${p.stages.length} stage(s), about ${esc(roughly(p.seconds))} in all. Nothing has been changed; this is a plan.</p>`,
  ];
  if (p.blockers.length > 0)
    out.push(
      '<h2>Blockers</h2><ul>',
      ...p.blockers.map((b) => {
        const t = describeBlocker(b);
        return `<li class="blocker"><b>${esc(t.title)}</b> (<code>${esc(b.kind)}</code>): ${esc(t.detail)}<br>fix: <pre>${esc(t.remediation)}</pre></li>`;
      }),
      '</ul>',
    );
  if (p.warnings.length > 0)
    out.push('<h2>Warnings</h2><ul>', ...p.warnings.map((w) => `<li>${esc(w)}</li>`), '</ul>');
  for (const s of p.stages) {
    out.push(
      `<h2 id="stage-${s.index}">Stage ${s.index}: ${s.kind === 'kubernetes' ? 'Kubernetes' : 'Talos'} ${esc(s.from)} → ${esc(s.to)} (about ${esc(roughly(s.seconds))})</h2>`,
      `<p>Version from ${esc(s.versionSource)}.</p>`,
      `<p>Control plane ${esc(s.controlPlane.name)}: ${s.controlPlane.replicas} Machine(s), one at a time (about ${esc(roughly(s.controlPlane.seconds))}).</p>`,
    );
    if (s.pools.length > 0)
      out.push(
        '<table><tr><th>pool</th><th>replicas</th><th>maxSurge</th><th>maxUnavailable</th><th>estimate</th><th>why</th></tr>',
        ...s.pools.map(
          (x) =>
            `<tr><td>${esc(x.name)}</td><td>${x.replicas}</td><td>${x.maxSurge}</td><td>${x.maxUnavailable}</td><td>${esc(roughly(x.seconds))}</td><td>${esc(x.why)}</td></tr>`,
        ),
        '</table>',
      );
    out.push('<ol>', ...s.writes.map((w) => `<li>${writeHtml(w)}</li>`), '</ol>');
  }
  out.push('</body></html>');
  return `${out.join('\n')}\n`;
}
