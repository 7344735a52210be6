/**
 * Renders facts as a human table, JSON or YAML. JSON and YAML carry the same document: the target
 * (with where each choice came from) and every fact, in display order, with structured provenance.
 */
import { stringify as toYaml } from 'yaml';
import { describeSource } from '../snapshot/model.js';
import { FACT_FAMILIES, type Fact, type Facts, listFacts } from './model.js';

export const FACTS_OUTPUTS = ['table', 'json', 'yaml'] as const;
export type FactsOutput = (typeof FACTS_OUTPUTS)[number];

export interface FactsSummary {
  facts: number;
  conflicts: number;
  missing: number;
}

export function summarize(facts: Facts): FactsSummary {
  const all = listFacts(facts);
  return {
    facts: all.length,
    conflicts: all.filter((f) => f.conflict).length,
    missing: all.filter((f) => f.value === undefined).length,
  };
}

/** The document behind -o json / -o yaml. */
export function factsDocument(facts: Facts) {
  const { talos, ...target } = facts.target;
  return {
    formatVersion: facts.formatVersion,
    snapshot: facts.snapshot,
    target: { ...target, talosRelease: talos },
    summary: summarize(facts),
    facts: listFacts(facts).map(plain),
  };
}

/** A fact as plain data: `value: undefined` becomes an absent key in JSON, so say it explicitly. */
function plain(f: Fact<unknown>) {
  return { ...f, value: f.value === undefined ? null : f.value, known: f.value !== undefined };
}

export function renderFacts(facts: Facts, format: FactsOutput): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(factsDocument(facts), null, 2)}\n`;
    case 'yaml':
      return toYaml(factsDocument(facts), { lineWidth: 0, aliasDuplicateObjects: false });
    case 'table':
      return renderTable(facts);
  }
}

// ---------------------------------------------------------------------------------------------
// Table

const MAX_ITEMS = 20;

const FAMILY_TITLES: Record<(typeof FACT_FAMILIES)[number], string> = {
  cluster: 'CLUSTER',
  network: 'NETWORK',
  apiserver: 'KUBE-APISERVER',
  controllerManager: 'KUBE-CONTROLLER-MANAGER',
  scheduler: 'KUBE-SCHEDULER',
  encryption: 'ENCRYPTION AT REST',
  etcd: 'ETCD',
  nodes: 'NODES',
  kubelet: 'KUBELET',
  cni: 'CNI',
  kubeProxy: 'KUBE-PROXY',
};

export function renderTable(facts: Facts): string {
  const out: string[] = [];
  out.push(`facts from ${facts.snapshot.source} (snapshot taken ${facts.snapshot.createdAt})`);
  out.push('');
  out.push('TARGET');
  const width = Math.max(...facts.target.choices.map((c) => c.field.length));
  for (const c of facts.target.choices) {
    out.push(`  ${c.field.padEnd(width)}  ${c.value ?? '(unknown)'}  (${c.note})`);
  }
  const t = facts.target.talos;
  out.push(
    `  ${''.padEnd(width)}  Talos ${t.version}: etcd ${t.etcdVersion}, Kubernetes ${t.kubernetesMin} – ${t.kubernetesMaxMinor}.x, ${t.configFormat} config`,
  );
  for (const family of FACT_FAMILIES) {
    out.push('');
    out.push(FAMILY_TITLES[family]);
    for (const f of Object.values(facts[family]) as Fact<unknown>[]) out.push(...renderFact(f));
  }
  const s = summarize(facts);
  out.push('');
  out.push(
    `${s.facts} facts, ${s.conflicts} conflict${s.conflicts === 1 ? '' : 's'}, ${s.missing} missing` +
      (s.conflicts + s.missing > 0 ? ' (marked CONFLICT / MISSING above)' : ''),
  );
  return `${out.join('\n')}\n`;
}

function renderFact(f: Fact<unknown>): string[] {
  const lines: string[] = [];
  if (f.value === undefined) {
    lines.push(`  ${f.key}  MISSING  (${f.title})`);
    lines.push(`      provide: ${f.missing ?? 'unknown'}`);
    return lines;
  }
  const value = formatValue(f.value);
  const mark = f.conflict ? '  CONFLICT' : '';
  if (value.length === 1) {
    lines.push(`  ${f.key}  ${value[0]}${mark}`);
  } else {
    lines.push(`  ${f.key}${mark}`);
    for (const l of value) lines.push(`      ${l}`);
  }
  if (f.conflict) {
    lines.push(`      believed: ${oneLine(f.conflict.believed)} — ${f.conflict.reason}`);
    for (const c of f.conflict.candidates) {
      lines.push(`      candidate ${oneLine(c.value)}  ← ${describeSource(c.source)}`);
    }
  } else {
    for (const p of f.provenance) lines.push(`      ← ${describeSource(p)}`);
  }
  if (f.note) lines.push(`      note: ${f.note}`);
  return lines;
}

function oneLine(v: unknown): string {
  const lines = formatValue(v);
  return lines.length === 1 ? (lines[0] ?? '') : `[${lines.join('; ')}]`;
}

/** A value as one or more lines; lists of records one line per item, capped at MAX_ITEMS. */
export function formatValue(v: unknown): string[] {
  if (v === undefined) return ['(unknown)'];
  if (v === null) return ['(not set)'];
  if (typeof v !== 'object') return [String(v)];
  if (Array.isArray(v)) {
    if (v.length === 0) return ['(none)'];
    if (v.every((x) => typeof x !== 'object' || x === null)) return [v.map(String).join(', ')];
    if (v.every(isFlag)) return [v.map((f) => `--${f.name}=${f.value}`).join(' ')];
    const items = v.slice(0, MAX_ITEMS).map(formatItem);
    if (v.length > MAX_ITEMS) items.push(`… and ${v.length - MAX_ITEMS} more (-o json lists all)`);
    return items;
  }
  const o = v as Record<string, unknown>;
  // Endpoints.
  if (typeof o['url'] === 'string' && typeof o['host'] === 'string') {
    return [
      o['node']
        ? `${o['url']} (the address of node ${String(o['node'])}: not a load balancer or VIP)`
        : o['url'],
    ];
  }
  return [formatRecord(o)];
}

function isFlag(x: unknown): x is { name: string; value: string } {
  if (typeof x !== 'object' || x === null) return false;
  const keys = Object.keys(x);
  return keys.length === 2 && keys.includes('name') && keys.includes('value');
}

function formatItem(x: unknown): string {
  if (typeof x !== 'object' || x === null) return String(x);
  const o = x as Record<string, unknown>;
  // Component instances (static pods).
  if (Array.isArray(o['flags']) && 'source' in o) {
    const flags = o['flags'] as unknown[];
    const extra = o['advertiseAddress'] ? ` advertise ${String(o['advertiseAddress'])}` : '';
    return `${String(o['node'] ?? '(node unknown)')}: ${String(o['image'] ?? '(no image)')}${extra} (${flags.length} flags)`;
  }
  // Nodes.
  if (Array.isArray(o['addresses']) && Array.isArray(o['taints'])) {
    const taints = (o['taints'] as { key: string; value?: string; effect: string }[])
      .map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`)
      .join(',');
    const parts = [String(o['name']), String(o['internalIP'] ?? '-'), String(o['kubeletVersion'] ?? '-')];
    parts.push(`taints: ${taints || 'none'}`);
    if (o['unschedulable']) parts.push('cordoned');
    const adv = o['advertiseAddress'] as { address: string } | null | undefined;
    if (adv)
      parts.push(`advertise ${adv.address}${o['apiserverPort'] ? `:${String(o['apiserverPort'])}` : ''}`);
    const member = o['etcdMember'] as { name: string; id: string } | null | undefined;
    if (member) parts.push(`etcd ${member.name}`);
    if (o['hasNodeObject'] === false) parts.push('(no Node object)');
    return parts.join('  ');
  }
  // etcd members.
  if (Array.isArray(o['peerURLs'])) {
    const role = `${o['isLearner'] ? 'learner' : 'voter'}${o['isLeader'] ? ', leader' : ''}`;
    const node = o['node']
      ? ` on ${String(o['node'])} (by ${String(o['nodeMatch'])})`
      : ' (no matching node)';
    const ver = o['version'] ? ` v${String(o['version'])}` : '';
    return `${String(o['name'] || '(unstarted)')} id ${String(o['id'])} ${role}${ver}${node}`;
  }
  // Encryption rules.
  if (Array.isArray(o['resources']) && Array.isArray(o['providers'])) {
    const providers = (o['providers'] as { type: string; keyNames: string[] }[])
      .map((p) => (p.keyNames.length > 0 ? `${p.type}(${p.keyNames.join(',')})` : p.type))
      .join(' > ');
    return `${(o['resources'] as string[]).join(',')}: ${providers}`;
  }
  if (typeof o['version'] === 'string' && typeof o['nodes'] === 'number')
    return `${o['version']} ×${o['nodes']}`;
  return formatRecord(o);
}

function formatRecord(o: Record<string, unknown>): string {
  const parts = Object.entries(o)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${formatField(v)}`);
  return parts.length > 0 ? parts.join(' ') : '(empty)';
}

function formatField(v: unknown): string {
  if (v === null) return '(not set)';
  if (Array.isArray(v) && v.every((x) => typeof x !== 'object' || x === null))
    return v.length > 0 ? v.join(',') : '(none)';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}
