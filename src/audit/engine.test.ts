import { describe, expect, it } from 'vitest';
import { deriveFacts } from '../facts/derive.js';
import type { Snapshot } from '../snapshot/model.js';
import { failsAt, runAudit, runAuditDetailed, unobservedAt } from './engine.js';
import { notApplicable, type Rule, type RuleFinding, skip } from './rule.js';
import { parseSuppressions } from './suppressions.js';
import { makeSnapshot, obj } from './testing.js';

const NOW = new Date('2026-08-20T00:00:00Z');

/** A rule that reports every Node it is given, so tests control the findings through the snapshot. */
const perNode: Rule = {
  id: 'nodes.example',
  family: 'nodes',
  severity: 'risk',
  title: 'Example per-node rule',
  inputs: ['api'],
  reads: [],
  check: (ctx) =>
    ctx.snapshot.resources.nodes.map((n) => ({
      message: `node ${n.metadata.name}`,
      evidence: [{ kind: 'node', node: n.metadata.name, field: 'metadata.labels' }],
      remediation: 'relabel',
      // Per-finding override: control planes are blockers.
      ...(n.metadata.labels?.['node-role.kubernetes.io/control-plane'] !== undefined
        ? { severity: 'blocker' as const }
        : {}),
    })),
};
const needsEtcd: Rule = {
  id: 'etcd.example',
  family: 'etcd',
  severity: 'blocker',
  title: 'needs etcd',
  inputs: ['etcd'],
  reads: [],
  check: () => {
    throw new Error('must not run without etcd');
  },
};
const needsMgmt: Rule = {
  id: 'capi.example',
  family: 'capi',
  severity: 'blocker',
  title: 'needs mgmt',
  inputs: ['mgmt'],
  reads: [],
  notApplicable: (t) => (t.provisioner === 'capi' ? undefined : 'Cluster API mode only'),
  check: () => [],
};
const dynamicSkip: Rule = {
  id: 'encryption.example',
  family: 'encryption',
  severity: 'blocker',
  title: 'dynamic skip',
  inputs: ['node'],
  reads: [],
  requires: ['resources'],
  check: () => skip(['encryption'], 'add encryption-config.yaml'),
};
const dynamicNa: Rule = {
  ...dynamicSkip,
  id: 'encryption.example-na',
  check: () => notApplicable('no encryption'),
};
const crashing: Rule = {
  id: 'workload.crash',
  family: 'workload',
  severity: 'risk',
  title: 'crashes',
  inputs: ['api'],
  reads: [],
  check: () => {
    throw new Error('boom');
  },
};
const duplicate: Rule = {
  id: 'workload.dup',
  family: 'workload',
  severity: 'info',
  title: 'two findings, one object',
  inputs: ['api'],
  reads: [],
  check: () => [
    {
      message: 'first',
      evidence: [{ kind: 'node', node: 'w', field: 'f', observed: '1' }],
      remediation: 'r',
    },
    {
      message: 'second',
      severity: 'risk',
      evidence: [{ kind: 'node', node: 'w', field: 'f', observed: '2' }],
      remediation: 'r',
    },
  ],
};
const passing: Rule = { ...perNode, id: 'nodes.passing', check: () => [] };

function snapshotWithNodes(): Snapshot {
  return makeSnapshot({
    resources: {
      nodes: [
        obj('Node', 'cp-1', {
          metadata: { name: 'cp-1', labels: { 'node-role.kubernetes.io/control-plane': '' } },
        }),
        obj('Node', 'worker-1'),
      ],
    },
  });
}

function audit(
  rules: Rule[],
  extra: Partial<Parameters<typeof runAudit>[0]> = {},
  snapshot = snapshotWithNodes(),
) {
  const facts = deriveFacts(snapshot, { talosVersion: 'v1.13.9' });
  return runAuditDetailed({ snapshot, facts, target: facts.target, rules, now: NOW, ...extra });
}

describe('audit engine', () => {
  it('runs rules, applies severity overrides and records the target', () => {
    const { report } = audit([perNode, passing]);
    expect(report.findings.map((f) => [f.severity, f.subject.name])).toEqual([
      ['blocker', 'cp-1'],
      ['risk', 'worker-1'],
    ]);
    expect(report.findings[0]!.target).toMatchObject({
      talosVersion: 'v1.13.9',
      kubeprism: true,
      provisioner: 'manual',
    });
    expect(report.counts).toMatchObject({
      blocker: 1,
      risk: 1,
      info: 0,
      total: 2,
      passed: 1,
      failed: 1,
      rules: 2,
    });
    expect(report.rules.map((r) => [r.id, r.outcome, r.findings])).toEqual([
      ['nodes.example', 'failed', 2],
      ['nodes.passing', 'passed', 0],
    ]);
    expect(report.generatedAt).toBe(NOW.toISOString());
    expect(report.snapshot.objects).toEqual({ nodes: 2 });
  });

  it("fills a finding's artifacts from the rule unless the finding names its own", () => {
    const withKit: Rule = {
      ...perNode,
      artifacts: ['talos/worker-patch.yaml'],
      check: (ctx) =>
        (perNode.check(ctx) as RuleFinding[]).map((f) =>
          f.severity === 'blocker' ? { ...f, artifacts: ['talos/controlplane-patch.yaml'] } : f,
        ),
    };
    const { report } = audit([withKit]);
    expect(report.findings.map((f) => [f.subject.name, f.artifacts])).toEqual([
      ['cp-1', ['talos/controlplane-patch.yaml']],
      ['worker-1', ['talos/worker-patch.yaml']],
    ]);
    expect(audit([perNode]).report.findings.every((f) => f.artifacts.length === 0)).toBe(true);
  });

  it('skips rules whose inputs are missing and says what to provide, never passes them', () => {
    const { report } = audit([needsEtcd, dynamicSkip, needsMgmt]);
    expect(report.skipped).toEqual([
      {
        ruleId: 'etcd.example',
        because: 'input-missing',
        missing: ['etcd'],
        howToProvide: expect.stringContaining('etcd/member-list.json'),
      },
      {
        ruleId: 'encryption.example',
        because: 'input-missing',
        missing: ['encryption'],
        howToProvide: 'add encryption-config.yaml',
      },
    ]);
    expect(report.notApplicable).toEqual([{ ruleId: 'capi.example', reason: 'Cluster API mode only' }]);
    expect(report.rules.map((r) => r.outcome)).toEqual(['skipped', 'skipped', 'not-applicable']);
    expect(report.counts.passed).toBe(0);
  });

  it('skips, never passes, a rule whose input the server refused; runs the rules that read what was observed', () => {
    const snapshot = snapshotWithNodes();
    snapshot.manifest.unobserved = [
      {
        input: 'poddisruptionbudgets',
        reason: 'forbidden',
        verb: 'list',
        group: 'policy',
        resource: 'poddisruptionbudgets',
        message: 'poddisruptionbudgets.policy is forbidden: User "u" cannot list resource …',
      },
    ];
    // Both would pass on an empty list; only the one that does not read PDBs may.
    const readsPdbs: Rule = {
      ...passing,
      id: 'workload.needs-pdbs',
      reads: ['pods', 'poddisruptionbudgets'],
    };
    const readsNodes: Rule = { ...passing, id: 'nodes.needs-nodes', reads: ['nodes'] };
    const { report } = audit([readsPdbs, readsNodes], {}, snapshot);
    expect(report.rules.map((r) => [r.id, r.outcome])).toEqual([
      ['workload.needs-pdbs', 'skipped'],
      ['nodes.needs-nodes', 'passed'],
    ]);
    expect(report.skipped).toEqual([
      {
        ruleId: 'workload.needs-pdbs',
        because: 'not-observed',
        missing: ['poddisruptionbudgets'],
        howToProvide: expect.stringMatching(
          /^the server refused list poddisruptionbudgets\.policy \(HTTP 403\): grant it .*ferry snapshot --print-clusterrole/,
        ),
        notObserved: snapshot.manifest.unobserved,
      },
    ]);
    expect(report.counts).toMatchObject({ passed: 1, skipped: 1 });
    expect(report.snapshot.unobserved).toEqual(snapshot.manifest.unobserved);
    // No finding, yet no pass: a blocker rule that could not read its input fails the audit.
    expect(report.findings).toEqual([]);
    const asBlocker = audit([{ ...readsPdbs, severity: 'blocker' }, readsNodes], {}, snapshot).report;
    expect(unobservedAt(asBlocker, 'blocker')).toEqual(['workload.needs-pdbs']);
    expect(failsAt(asBlocker, 'blocker')).toBe(true);
    expect(failsAt(asBlocker, 'never')).toBe(false);
    // A risk rule not observed fails only a --fail-on that reaches risks.
    expect(readsPdbs.severity).toBe('risk');
    expect(failsAt(report, 'blocker')).toBe(false);
    expect(unobservedAt(report, 'risk')).toEqual(['workload.needs-pdbs']);
    expect(failsAt(report, 'risk')).toBe(true);
  });

  it('a part whose ConfigMap was refused skips its rules as not observed, not as not given', () => {
    const snapshot = snapshotWithNodes();
    snapshot.manifest.unobserved = [
      {
        input: 'configmap kube-system/kubeadm-config',
        reason: 'forbidden',
        verb: 'get',
        group: '',
        resource: 'configmaps',
        namespace: 'kube-system',
        name: 'kubeadm-config',
        message: 'configmaps "kubeadm-config" is forbidden',
      },
    ];
    const needsKubeadm: Rule = { ...passing, id: 'network.needs-kubeadm', inputs: ['kubeadm'], reads: [] };
    const { report } = audit([needsKubeadm], {}, snapshot);
    expect(report.skipped).toEqual([
      expect.objectContaining({
        because: 'not-observed',
        missing: ['configmap kube-system/kubeadm-config'],
        howToProvide: expect.stringContaining('get configmaps kubeadm-config in kube-system'),
      }),
    ]);
  });

  it('skips a CAPI rule in CAPI mode because the management cluster is not in the snapshot', () => {
    const snapshot = snapshotWithNodes();
    const facts = deriveFacts(snapshot, { provisioner: 'capi' });
    const report = runAudit({ snapshot, facts, target: facts.target, rules: [needsMgmt], now: NOW });
    expect(report.skipped[0]).toMatchObject({ ruleId: 'capi.example', missing: ['mgmt'] });
  });

  it('reports a crashing rule as an error, not a pass', () => {
    const { report } = audit([crashing, dynamicNa]);
    expect(report.errors).toEqual([{ ruleId: 'workload.crash', message: 'boom' }]);
    expect(report.rules[0]!.outcome).toBe('error');
    expect(report.rules[1]!.outcome).toBe('not-applicable');
    expect(report.counts.errors).toBe(1);
  });

  it('merges findings with the same fingerprint, keeping the more severe verdict', () => {
    const { report } = audit([duplicate]);
    expect(report.findings).toHaveLength(1);
    expect(report.findings[0]!.severity).toBe('risk');
    expect(report.findings[0]!.evidence.map((e) => e.observed)).toEqual(['1', '2']);
  });

  it('applies suppressions, then the baseline, and counts both', () => {
    const suppressions = parseSuppressions(
      '- rule: nodes.example\n  scope: {node: "worker-*"}\n  reason: workers are replaced anyway\n',
      'sup.yaml',
      ['nodes.example'],
    );
    const first = audit([perNode], { suppressions });
    expect(first.report.findings.map((f) => f.subject.name)).toEqual(['cp-1']);
    expect(first.report.suppressed.map((s) => s.finding.subject.name)).toEqual(['worker-1']);
    expect(first.report.counts.suppressed).toBe(1);

    const baseline = { file: 'b.json', fingerprints: new Set(first.unsuppressed.map((f) => f.fingerprint)) };
    const second = audit([perNode], { suppressions, baseline });
    expect(second.report.findings).toEqual([]);
    expect(second.report.counts).toMatchObject({ baselined: 1, suppressed: 1, total: 0 });
    expect(second.report.baseline).toEqual({ file: 'b.json', known: 1 });
    // What --write-baseline would record still includes the baselined finding.
    expect(second.unsuppressed.map((f) => f.subject.name)).toEqual(['cp-1']);
  });

  it('decides the exit threshold from reported findings only', () => {
    const { report } = audit([perNode]);
    expect(failsAt(report, 'blocker')).toBe(true);
    expect(failsAt(report, 'never')).toBe(false);
    const onlyRisk = audit(
      [perNode],
      {},
      makeSnapshot({ resources: { nodes: [obj('Node', 'worker-1')] } }),
    ).report;
    expect(failsAt(onlyRisk, 'blocker')).toBe(false);
    expect(failsAt(onlyRisk, 'risk')).toBe(true);
    expect(failsAt(onlyRisk, 'info')).toBe(true);
  });
});
