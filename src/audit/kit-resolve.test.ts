import { describe, expect, it } from 'vitest';
import { deriveFacts } from '../facts/derive.js';
import { failsAt, runAuditDetailed } from './engine.js';
import type { KitCheck } from './kit-checks.js';
import { resolveByKit } from './kit-resolve.js';
import type { Rule } from './rule.js';
import { parseSuppressions } from './suppressions.js';
import { makeSnapshot, memoryKit, obj } from './testing.js';

const NOW = new Date('2026-08-20T00:00:00Z');
const PATCH = 'talos/controlplane-patch.yaml';
const proxyOff: KitCheck = {
  kind: 'value',
  file: PATCH,
  path: ['cluster', 'proxy', 'disabled'],
  test: { op: 'equals', value: true },
};

/** One finding the kit can resolve (kube-proxy off), one it is checked for, one it cannot touch. */
const rules: Rule[] = [
  {
    id: 'addons.example',
    family: 'addons',
    severity: 'blocker',
    title: 'kube-proxy',
    inputs: ['api'],
    reads: [],
    check: () => [
      {
        message: 'Talos would start kube-proxy',
        evidence: [{ kind: 'target', field: 'proxy' }],
        remediation: 'set cluster.proxy.disabled: true',
        kitChecks: [proxyOff],
      },
    ],
  },
  {
    id: 'kubelet.example',
    family: 'kubelet',
    severity: 'risk',
    title: 'kubelet',
    inputs: ['api'],
    reads: [],
    check: () => [
      {
        message: 'maxPods',
        evidence: [{ kind: 'target', field: 'maxPods' }],
        remediation: 'carry maxPods',
        kitChecks: [
          {
            kind: 'value',
            file: PATCH,
            path: ['machine', 'kubelet', 'extraConfig', 'maxPods'],
            test: { op: 'equals', value: 150 },
          },
        ],
      },
    ],
  },
  {
    id: 'workload.example',
    family: 'workload',
    severity: 'blocker',
    title: 'pdb',
    inputs: ['api'],
    reads: [],
    check: () => [
      { message: 'pdb blocks', evidence: [{ kind: 'node', node: 'w-1' }], remediation: 'scale up' },
    ],
  },
];

const KIT = memoryKit({ [PATCH]: 'version: v1alpha1\ncluster:\n  proxy:\n    disabled: true\n' });

function audit(extra: Partial<Parameters<typeof runAuditDetailed>[0]> = {}) {
  const snapshot = makeSnapshot({ resources: { nodes: [obj('Node', 'w-1')] } });
  const facts = deriveFacts(snapshot, { talosVersion: 'v1.13.9' });
  return runAuditDetailed({ snapshot, facts, target: facts.target, rules, now: NOW, ...extra });
}

describe('resolveByKit', () => {
  it('resolves a finding when every check holds, naming the kit file and what it does', () => {
    const { report } = audit();
    const { open, resolved } = resolveByKit(report.findings, KIT);
    expect(resolved.map((f) => f.ruleId)).toEqual(['addons.example']);
    expect(resolved[0]!.resolution).toEqual({
      kit: 'kit',
      files: [PATCH],
      how: `${PATCH} sets cluster.proxy.disabled: true`,
    });
    // Checked but not resolved: it says why; never checked: untouched.
    expect(open.map((f) => [f.ruleId, f.kitGap])).toEqual([
      ['workload.example', undefined],
      ['kubelet.example', `${PATCH} has machine.kubelet.extraConfig.maxPods: (not set)`],
    ]);
    expect(report.findings.every((f) => f.resolution === undefined && f.kitGap === undefined)).toBe(true);
  });

  it('does not resolve when one check of several fails', () => {
    const { report } = audit();
    const f = {
      ...report.findings.find((x) => x.ruleId === 'addons.example')!,
      kitChecks: [proxyOff, { kind: 'file', file: 'cilium/agents.sh', mentions: [] } as KitCheck],
    };
    const { open, resolved } = resolveByKit([f], KIT);
    expect(resolved).toEqual([]);
    expect(open[0]!.kitGap).toBe('the kit has no cilium/agents.sh');
  });
});

describe('the audit with a kit', () => {
  it('reports resolved findings apart: not in findings, not counted, not failing --fail-on', () => {
    const without = audit().report;
    expect(without.resolved).toEqual([]);
    expect(without.kit).toBeUndefined();
    const { report } = audit({ kit: KIT });
    expect(report.resolved.map((f) => f.ruleId)).toEqual(['addons.example']);
    expect(report.findings.map((f) => f.ruleId)).toEqual(['workload.example', 'kubelet.example']);
    expect(report.counts).toMatchObject({ blocker: 1, risk: 1, total: 2, resolved: 1 });
    expect(without.counts).toMatchObject({ blocker: 2, risk: 1, total: 3, resolved: 0 });
    expect(report.kit).toEqual({ path: 'kit', generatedAt: '2026-08-01T00:00:00.000Z', warnings: [] });
    // With the only blocker the kit cannot fix accepted, the kit decides the exit status.
    const suppressions = parseSuppressions(
      '- rule: workload.example\n  reason: scaled up before the roll\n',
      's.yaml',
      rules.map((r) => r.id),
    );
    expect(failsAt(audit({ suppressions }).report, 'blocker')).toBe(true);
    expect(failsAt(audit({ suppressions, kit: KIT }).report, 'blocker')).toBe(false);
  });

  it('leaves suppressed findings suppressed, and records resolved ones in a written baseline', () => {
    const suppressions = parseSuppressions(
      '- rule: addons.example\n  reason: accepted\n',
      's.yaml',
      rules.map((r) => r.id),
    );
    const { report, unsuppressed } = audit({ kit: KIT, suppressions });
    expect(report.resolved).toEqual([]);
    expect(report.suppressed.map((s) => s.finding.ruleId)).toEqual(['addons.example']);
    // The baseline is about the cluster: a finding the kit will fix is still there until it is applied.
    expect(audit({ kit: KIT }).unsuppressed.map((f) => f.ruleId)).toContain('addons.example');
    expect(unsuppressed.map((f) => f.ruleId)).not.toContain('addons.example');
  });

  it('warns when the kit was generated from another snapshot', () => {
    const other = memoryKit({ [PATCH]: 'cluster: {}\n' });
    const kit = {
      ...other,
      summary: { ...other.summary, snapshot: { createdAt: null, source: 'files /elsewhere' } },
    };
    expect(audit({ kit }).report.kit?.warnings).toEqual([
      'the kit was generated from files /elsewhere, this audit from files fixtures/cluster: is it the same cluster?',
    ]);
  });
});
