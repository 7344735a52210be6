import { describe, expect, it } from 'vitest';
import { type Finding, fingerprintOf, type Severity, type Subject } from '../findings.js';
import {
  bySeverity,
  compactObjects,
  DETAILED_UP_TO,
  detailed,
  groupByRule,
  hiddenLine,
  namespaceCount,
  SHOWN_OBJECTS,
  severityMix,
} from './group.js';

const TARGET = { talosVersion: 'v1.13.9', kubeprism: true, provisioner: 'manual' };

function finding(ruleId: string, subject: Subject, over: Partial<Finding> = {}): Finding {
  return {
    ruleId,
    family: ruleId.split('.')[0]!,
    severity: 'risk',
    title: `${ruleId} title`,
    message: `${subject.name} is wrong`,
    evidence: [],
    remediation: `fix ${subject.name}`,
    fingerprint: fingerprintOf(ruleId, subject, undefined),
    artifacts: [],
    subject,
    target: TARGET,
    ...over,
  };
}

const dep = (ns: string, name: string): Subject => ({ kind: 'Deployment', namespace: ns, name });

/** 45 findings of one rule over three namespaces (in scrambled order) and two of another. */
function sample(): Finding[] {
  const out: Finding[] = [];
  for (let i = 44; i >= 0; i--) out.push(finding('workload.pdb-missing', dep(`team-${i % 3}`, `svc-${i}`)));
  out.push(
    finding('apiserver.san-loopback', { kind: 'PkiFile', name: 'apiserver.crt' }, { severity: 'blocker' }),
  );
  out.push(
    finding('apiserver.san-loopback', { kind: 'PkiFile', name: 'apiserver-2.crt' }, { severity: 'blocker' }),
  );
  return out;
}

describe('groupByRule', () => {
  it('makes one entry per rule, most severe first, with the count and every item', () => {
    const groups = groupByRule(sample(), (f) => f);
    expect(groups.map((g) => [g.ruleId, g.severity, g.total])).toEqual([
      ['apiserver.san-loopback', 'blocker', 2],
      ['workload.pdb-missing', 'risk', 45],
    ]);
    expect(groups[1]!.items).toHaveLength(45);
    expect(groups[1]!.namespaces).toBe(3);
    expect(bySeverity(groups).map((s) => [s.severity, s.groups.length])).toEqual([
      ['blocker', 1],
      ['risk', 1],
    ]);
  });

  it('shows the first 20 objects by namespace, in natural name order, and counts the rest', () => {
    const g = groupByRule(sample(), (f) => f).find((x) => x.ruleId === 'workload.pdb-missing')!;
    expect(SHOWN_OBJECTS).toBe(20);
    const shown = g.shown.flatMap((ns) => ns.items);
    expect(shown).toHaveLength(20);
    expect(g.hidden).toBe(25);
    // team-0 holds svc-0, svc-3, … svc-42 (15 of them); the next 5 come from team-1.
    expect(g.shown.map((ns) => [ns.namespace, ns.items.length])).toEqual([
      ['team-0', 15],
      ['team-1', 5],
    ]);
    expect(g.shown[0]!.items.slice(0, 5).map((f) => f.subject.name)).toEqual([
      'svc-0',
      'svc-3',
      'svc-6',
      'svc-9',
      'svc-12',
    ]);
    expect(g.rest.map((ns) => [ns.namespace, ns.items.length])).toEqual([
      ['team-1', 10],
      ['team-2', 15],
    ]);
    // A namespace cut short says how many it has in all.
    expect(g.shown.map(namespaceCount)).toEqual([' (15)', ' (5 of 15)']);
    // team-1 is already on screen: one namespace only the hidden objects are in.
    expect(g.hiddenNamespaces).toBe(1);
    expect(hiddenLine(g)).toBe('… and 25 more (1 more namespace)');
    expect(detailed(g)).toBe(false);
  });

  it('--expand RULE shows every object of that rule and only that rule', () => {
    const groups = groupByRule(sample(), (f) => f, { expand: ['workload.pdb-missing'] });
    const g = groups.find((x) => x.ruleId === 'workload.pdb-missing')!;
    expect(g.expanded).toBe(true);
    expect(g.shown.flatMap((ns) => ns.items)).toHaveLength(45);
    expect(g.hidden).toBe(0);
    expect(hiddenLine(g)).toBeUndefined();
    expect(detailed(g)).toBe(true);
    expect(groups.find((x) => x.ruleId === 'apiserver.san-loopback')!.expanded).toBe(false);
  });

  it('says the fix once when the findings agree, and the first when they differ', () => {
    const same = groupByRule(
      [1, 2, 3, 4].map((i) =>
        finding('cni.x', dep('a', `d${i}`), { remediation: 'one fix', message: 'same' }),
      ),
      (f) => f,
    )[0]!;
    expect(same.fix).toEqual({ text: 'one fix', same: true });
    expect(same.message).toEqual({ text: 'same', same: true });
    const differ = groupByRule(sample(), (f) => f).find((x) => x.ruleId === 'workload.pdb-missing')!;
    expect(differ.fix).toEqual({ text: 'fix svc-0', same: false });
  });

  it('places a rule by its most severe finding and says the mix', () => {
    const list = [
      finding('etcd.x', { kind: 'EtcdMember', name: 'a' }, { severity: 'info' }),
      finding('etcd.x', { kind: 'EtcdMember', name: 'b' }, { severity: 'blocker' }),
      finding('etcd.x', { kind: 'EtcdMember', name: 'c' }, { severity: 'risk' }),
      finding('etcd.x', { kind: 'EtcdMember', name: 'd' }, { severity: 'risk' }),
    ];
    const [g] = groupByRule(list, (f) => f);
    expect(g!.severity).toBe<Severity>('blocker');
    expect(g!.bySeverity).toEqual({ blocker: 1, risk: 2, info: 1 });
    expect(severityMix(g!)).toBe('1 blocker, 2 risks, 1 info');
    expect(g!.items.map((f) => f.subject.name)).toEqual(['b', 'c', 'd', 'a']);
    const [one] = groupByRule(list.slice(2), (f) => f);
    expect(severityMix(one!)).toBeUndefined();
  });

  it('collects kit files and kit gaps once', () => {
    const list = [
      finding('cni.x', dep('a', 'x'), { artifacts: ['talos/a.yaml'], kitGap: 'gap' }),
      finding('cni.x', dep('a', 'y'), { artifacts: ['talos/a.yaml', 'talos/b.yaml'], kitGap: 'gap' }),
    ];
    const [g] = groupByRule(list, (f) => f);
    expect(g!.artifacts).toEqual(['talos/a.yaml', 'talos/b.yaml']);
    expect(g!.kitGaps).toEqual(['gap']);
  });

  it('groups entries that carry a finding (suppressed, resolved) the same way', () => {
    const entries = sample().map((f) => ({ finding: f, by: 'x' }));
    const groups = groupByRule(entries, (e) => e.finding);
    expect(groups.map((g) => [g.ruleId, g.total])).toEqual([
      ['apiserver.san-loopback', 2],
      ['workload.pdb-missing', 45],
    ]);
    expect(groups[0]!.items[0]!.by).toBe('x');
  });

  it('shows few findings one by one', () => {
    const g = groupByRule(sample(), (f) => f)[0]!;
    expect(g.total).toBeLessThanOrEqual(DETAILED_UP_TO);
    expect(detailed(g)).toBe(true);
  });
});

describe('compactObjects', () => {
  it('says the kind once per run and the node a pod is on', () => {
    const items = [
      finding('w.x', dep('a', 'web')),
      finding('w.x', dep('a', 'api')),
      finding('w.x', { kind: 'Pod', namespace: 'a', name: 'debug', node: 'worker-1' }),
      finding('w.x', { kind: 'Node', name: 'worker-1', node: 'worker-1' }),
    ];
    expect(compactObjects(items, (f) => f)).toBe(
      'Deployment web, api; Pod debug (on worker-1); Node worker-1',
    );
  });
});
