/** An UpgradePlan as JSON or Markdown (pure). */
import { stringify } from 'yaml';
import { roughly } from '../plan/batches/explain.js';
import { blockerExit, describeBlocker } from './blockers.js';
import type { UpgradePlan, Write } from './model.js';

export type UpgradeFormat = 'json' | 'md';

export function upgradeFormatFor(file: string): UpgradeFormat | undefined {
  if (file.endsWith('.json')) return 'json';
  if (file.endsWith('.md')) return 'md';
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
