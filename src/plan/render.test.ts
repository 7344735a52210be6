import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import { buildPlan } from './build.js';
import { parsePlan } from './load.js';
import { allSteps } from './model.js';
import { formatFor, renderPlan } from './render.js';
import { inputsFor } from './testing-example.js';

async function plan(strategy: 'surge' | 'replace' = 'surge') {
  return buildPlan(inputsFor(await exampleSnapshot(), { strategy }));
}

describe('the runbook renderings', () => {
  it('md and html show the worker batches, what bounded each, the estimate beside its lower bound, and the outages', async () => {
    const p = buildPlan({ ...inputsFor(await exampleSnapshot()), options: { surgeReplicas: true } });
    const e = p.workerRoll.estimate;
    const md = renderPlan(p, 'md');
    expect(md).toContain('## Workers');
    expect(md).toContain(
      `lower bound ${Math.round(e.lowerBoundSeconds / 60)} min (${e.lowerBoundSeconds} s)`,
    );
    expect(md).toContain(`(${e.seconds} s)`);
    expect(md).toContain('| batch | workers | pods | rounds | time | bounded by |');
    expect(md).toMatch(/\| 1 \| worker-1[^|]*\| \d+ \| 1 \| \d+ min \| /);
    expect(md).toContain('Deployment shop/checkout: 2 → 3 replicas before batch 1');
    expect(md).toContain('| Pod default/netshoot | bare-pod | worker-2 drains');
    const html = renderPlan(p, 'html');
    expect(html).toContain('<h2 id="workers">Workers</h2>');
    expect(html).toContain(`(${e.lowerBoundSeconds} s)`);
    expect(html).toContain('<td>Pod default/netshoot</td><td>bare-pod</td>');
    // Without the flag, the blocking budget is shown with its fix.
    const blocked = renderPlan(await plan(), 'md');
    expect(blocked).toContain('### Blocked PodDisruptionBudgets');
    expect(blocked).toContain('PodDisruptionBudget shop/checkout (minAvailable 2) allows no disruption');
  });

  it('md carries the commands an operator types, with the real ids and addresses', async () => {
    const md = renderPlan(await plan(), 'md');
    // cp-1's member id 13872586097927091956 is c085538e52f776f4 in hex; cp-2 (the leader) 9b93160b752b5f0a.
    expect(md).toContain('etcd remove-member c085538e52f776f4');
    expect(md).toContain('etcdctl --endpoints https://10.20.0.12:2379 move-leader');
    expect(md).toContain('kubectl drain cp-1 --ignore-daemonsets --delete-emptydir-data --timeout=900s');
    expect(md).toContain('kubectl cordon cp-1');
    expect(md).toContain('kubectl wait --for=condition=Ready node/talos-cp-1');
    expect(md).toContain(
      '[on cp-1] mkdir -p /etc/kubernetes/ferry-stopped && mv /etc/kubernetes/manifests/kube-apiserver.yaml',
    );
    expect(md).toContain(
      'etcdctl --endpoints https://10.20.0.11:2379 snapshot save etcd-before-migration.db',
    );
    expect(md).toContain('kubectl delete node cp-3');
    expect(md).toContain(
      'export ETCD_ENDPOINTS=https://10.20.0.11:2379,https://10.20.0.12:2379,https://10.20.0.13:2379',
    );
    expect(md).toContain('`2.12.etcd-remove-member.cp-1` · **DESTRUCTIVE**');
    // Every step appears once, under its id.
    for (const s of allSteps(await plan())) expect(md).toContain(`\`${s.id}\``);
    // The runbook names the digest of the plan.json it was rendered with: what was reviewed is what runs.
    expect(md).toContain(`digest \`${(await plan()).integrity.digest}\``);
  });

  it('md for replace brings the node back at its own address', async () => {
    const md = renderPlan(await plan('replace'), 'md');
    expect(md).toContain(
      'talosctl --talosconfig "$TALOSCONFIG" apply-config --insecure -n 10.20.0.11 --file',
    );
    expect(md).toContain('LB_ACTION=add NODE_NAME=talos-cp-1 ADDRESS=10.20.0.11 PORT=6443');
  });

  it('html is one self-contained page: no script, no stylesheet link, no external resource', async () => {
    const html = renderPlan(await plan(), 'html');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('<style>');
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\bsrc=|url\(|@import/i);
    // Only in-page anchors.
    for (const m of html.matchAll(/href="([^"]*)"/g)) expect(m[1]).toMatch(/^#/);
    // Placeholders and commands are escaped, not markup.
    expect(html).toContain('&lt;ADDRESS_OF_TALOS_CP_1&gt;');
    expect(html).not.toContain('<ADDRESS_OF_TALOS_CP_1>');
    expect(html).toContain('etcd remove-member c085538e52f776f4');
    expect(html).toMatch(/Plan digest <code>sha256:[0-9a-f]{64}<\/code>/);
  });

  it('json round-trips through the plan reader', async () => {
    const p = await plan();
    const back = parsePlan(renderPlan(p, 'json'), 'plan.json');
    expect(back).toEqual(p);
  });

  it('the plan reader refuses other formats and repeated ids', async () => {
    const p = await plan();
    expect(() => parsePlan('{', 'plan.json')).toThrow(FerryError);
    expect(() => parsePlan(JSON.stringify({ ...p, formatVersion: 99 }), 'plan.json')).toThrow(/format 99/);
    const dup = structuredClone(p);
    dup.phases[2]!.steps[1]!.id = dup.phases[2]!.steps[0]!.id;
    expect(() => parsePlan(JSON.stringify(dup), 'plan.json')).toThrow(/repeated/);
  });

  it('takes the format from the file extension or --format', () => {
    expect(formatFor('plan.json', undefined)).toBe('json');
    expect(formatFor('out/runbook.md', undefined)).toBe('md');
    expect(formatFor('plan.html', undefined)).toBe('html');
    expect(formatFor(undefined, undefined)).toBe('md');
    expect(formatFor(undefined, 'json')).toBe('json');
    expect(formatFor('plan.txt', 'html')).toBe('html');
    expect(() => formatFor('plan.txt', undefined)).toThrow(/extension/);
    expect(() => formatFor('plan.json', 'md')).toThrow(/contradicts/);
    expect(() => formatFor(undefined, 'yaml')).toThrow(/--format/);
  });
});
