import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import { EXTERNAL_ETCD_DIR, externalEtcdSnapshot } from '../snapshot/testing-external-etcd.js';
import { buildPlan } from './build.js';
import {
  type Count,
  countMax,
  countMin,
  type EtcdExpectation,
  isEmptyExpectation,
} from './expected-state.js';
import { allSteps, type Plan, type Step } from './model.js';
import { inputsFor, setLeader, stepsOfPhase, subjectBlocks } from './testing-example.js';

function c(n: Count): string {
  return typeof n === 'number' ? String(n) : `${n.min}-${n.max}`;
}

/** The etcd state a step leaves behind (its verification, else its gate), as "voters/learners/total". */
function after(s: Step): string {
  const e: EtcdExpectation | undefined = s.verify.expect.etcd ?? s.expect.etcd;
  return `${s.kind} ${e ? `${c(e.voters)}/${c(e.learners)}/${c(e.total)}` : '-'}`;
}

function swapOf(plan: Plan, node: string): Step[] {
  return [...stepsOfPhase(plan, 2), ...stepsOfPhase(plan, 4)].filter(
    (s) => s.subject === node && s.kind !== 'etcd-snapshot',
  );
}

const SURGE = [
  'gate 3/0/3',
  'provision 3-4/0-1/3-4',
  'wait-member-joined 3-4/0-1/4',
  'wait-member-voter 4/0/4',
  'wait-node-ready 4/0/4',
  'lb-add 4/0/4',
  'lb-remove 4/0/4',
  'cordon 4/0/4',
  'drain 4/0/4',
  'stop-apiserver 4/0/4',
  'etcd-move-leader 4/0/4',
  'etcd-remove-member 3/0/3',
  'verify-membership 3/0/3',
  'decommission 3/0/3',
  'delete-node -',
];

const REPLACE = [
  'gate 3/0/3',
  'cordon 3/0/3',
  'drain 3/0/3',
  'lb-remove 3/0/3',
  'stop-apiserver 3/0/3',
  'etcd-move-leader 3/0/3',
  'etcd-remove-member 2/0/2',
  'verify-membership 2/0/2',
  'decommission 2/0/2',
  'delete-node -',
  'provision 2-3/0-1/2-3',
  'wait-member-joined 2-3/0-1/3',
  'wait-member-voter 3/0/3',
  'wait-node-ready 3/0/3',
  'lb-add 3/0/3',
];

describe('buildPlan on the example cluster', () => {
  it('replaces control planes strictly one at a time, the leader (cp-2) last in phase 2, cp-3 in phase 4', async () => {
    const plan = buildPlan(inputsFor(await exampleSnapshot()));
    expect(plan.etcd.leader?.name).toBe('cp-2');
    expect(subjectBlocks(stepsOfPhase(plan, 2))).toEqual(['cp-1', 'cp-2']);
    expect(subjectBlocks(stepsOfPhase(plan, 4))).toEqual(['cp-3']);
    for (const node of ['cp-1', 'cp-2', 'cp-3']) {
      const kinds = swapOf(plan, node).map((s) => s.kind);
      expect(kinds.filter((k) => k === 'provision')).toHaveLength(1);
      expect(kinds.filter((k) => k === 'etcd-remove-member')).toHaveLength(1);
    }
    // The last kubeadm member is removed in phase 4 and nowhere else.
    const last = allSteps(plan).filter((s) => s.kind === 'etcd-remove-member' && s.params.lastKubeadmMember);
    expect(last.map((s) => [s.phase, s.subject])).toEqual([[4, 'cp-3']]);
    expect(plan.controlPlanes.map((x) => [x.node, x.phase])).toEqual([
      ['cp-1', 2],
      ['cp-2', 2],
      ['cp-3', 4],
    ]);
    // Phase 4 starts with a restore point.
    expect(stepsOfPhase(plan, 4)[0]?.kind).toBe('etcd-snapshot');
  });

  it.each(['cp-1', 'cp-3'])('puts the leader %s last in phase 2 whoever leads', async (leader) => {
    const snap = await exampleSnapshot();
    setLeader(snap, leader);
    const plan = buildPlan(inputsFor(snap));
    const phase2 = subjectBlocks(stepsOfPhase(plan, 2));
    expect(phase2.at(-1)).toBe(leader);
    expect(phase2).toHaveLength(2);
    expect(subjectBlocks(stepsOfPhase(plan, 4))).not.toContain(leader);
    const move = swapOf(plan, leader).find((s) => s.kind === 'etcd-move-leader');
    expect(move?.kind === 'etcd-move-leader' && move.params.leaderAtSnapshot).toBe(true);
    // Leadership goes to a Talos member: it then never has to move again.
    expect(move?.kind === 'etcd-move-leader' && move.params.to[0]?.kind).toBe('talos');
  });

  it('counts etcd members through a surge swap: 3 → 3 + 1 learner → 4 voters → 3', async () => {
    const plan = buildPlan(inputsFor(await exampleSnapshot(), { strategy: 'surge' }));
    for (const node of ['cp-1', 'cp-2', 'cp-3']) expect(swapOf(plan, node).map(after)).toEqual(SURGE);
  });

  it('counts etcd members through a replace swap: 3 → 2 → 2 + 1 learner → 3 voters', async () => {
    const plan = buildPlan(inputsFor(await exampleSnapshot(), { strategy: 'replace' }));
    for (const node of ['cp-1', 'cp-2', 'cp-3']) expect(swapOf(plan, node).map(after)).toEqual(REPLACE);
  });

  it.each(['surge', 'replace'] as const)(
    '%s: each gate expects what the step before left behind',
    async (strategy) => {
      const plan = buildPlan(inputsFor(await exampleSnapshot(), { strategy }));
      let prev: EtcdExpectation | undefined;
      let min = Number.POSITIVE_INFINITY;
      for (const s of [...stepsOfPhase(plan, 2), ...stepsOfPhase(plan, 3), ...stepsOfPhase(plan, 4)]) {
        const pre = s.expect.etcd;
        if (pre && prev) {
          expect([c(pre.voters), c(pre.learners), c(pre.total)], s.id).toEqual([
            c(prev.voters),
            c(prev.learners),
            c(prev.total),
          ]);
        }
        const post = s.verify.expect.etcd ?? pre;
        if (post) {
          prev = post;
          min = Math.min(min, countMin(post.voters));
        }
      }
      // surge never drops below the 3 voters it started with; replace goes down to 2, never lower.
      expect(min).toBe(strategy === 'surge' ? 3 : 2);
      expect(countMax(prev!.voters)).toBe(3);
    },
  );

  it('replace: the gate demands every other member healthy; surge: every member', async () => {
    const replace = buildPlan(inputsFor(await exampleSnapshot(), { strategy: 'replace' }));
    const swap = swapOf(replace, 'cp-1');
    const gate = swap[0]!;
    expect(gate.kind).toBe('gate');
    const healthy = gate.expect.etcd?.healthy;
    expect(healthy).not.toBe('all');
    expect(
      typeof healthy === 'object' && healthy.allExcept.kind === 'kubeadm' && healthy.allExcept.name,
    ).toBe('cp-1');
    // Once cp-1's member is gone, every remaining member must be healthy again.
    const removeAt = swap.findIndex((s) => s.kind === 'etcd-remove-member');
    expect(swap[removeAt]!.verify.expect.etcd?.healthy).toBe('all');
    for (const s of swap.slice(0, removeAt + 1)) expect(s.expect.etcd?.healthy, s.id).toEqual(healthy);

    const surge = buildPlan(inputsFor(await exampleSnapshot(), { strategy: 'surge' }));
    expect(swapOf(surge, 'cp-1')[0]!.expect.etcd?.healthy).toBe('all');
  });

  it.each(['surge', 'replace'] as const)(
    '%s: every destructive step has an idempotency check',
    async (strategy) => {
      const plan = buildPlan(inputsFor(await exampleSnapshot(), { strategy }));
      const destructive = allSteps(plan).filter((s) => s.destructive);
      expect(new Set(destructive.map((s) => s.kind))).toEqual(
        new Set([
          'etcd-remove-member',
          'decommission',
          'delete-node',
          'delete-bootstrap-token',
          'wipe-pki-copies',
          'manual',
          'drill',
        ]),
      );
      for (const s of allSteps(plan)) {
        expect(isEmptyExpectation(s.idempotencyCheck.doneWhen), s.id).toBe(false);
        expect(s.idempotencyCheck.description, s.id).not.toBe('');
        if (s.destructive && !s.undo.possible) expect(s.undo.reason, s.id).not.toBe('');
      }
      // Removing a member is done when the member is absent: the check names it.
      const remove = allSteps(plan).find((s) => s.kind === 'etcd-remove-member' && s.subject === 'cp-1')!;
      const member = remove.idempotencyCheck.doneWhen.etcd?.members.find(
        (m) => m.member.kind === 'kubeadm' && m.member.name === 'cp-1',
      );
      expect(member?.state).toBe('absent');
    },
  );

  it('gives stable, unique ids in the form phase.index.kind.subject', async () => {
    const a = buildPlan(inputsFor(await exampleSnapshot()));
    const b = buildPlan(inputsFor(await exampleSnapshot()));
    expect(b).toEqual(a);
    const ids = allSteps(a).map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const s of allSteps(a)) {
      expect(s.id).toBe(`${s.phase}.${String(s.index).padStart(2, '0')}.${s.kind}.${s.subject}`);
    }
    expect(ids).toContain('2.09.drain.cp-1');
    expect(a.source.snapshotDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('drains through the Eviction API and names the PDB that allows no disruption', async () => {
    const plan = buildPlan(inputsFor(await exampleSnapshot()));
    const drains = allSteps(plan).filter((s) => s.kind === 'drain' || s.kind === 'drain-batch');
    for (const d of drains)
      expect((d.kind === 'drain' || d.kind === 'drain-batch') && d.params.evictionOnly).toBe(true);
    const pdbsOf = (d: (typeof drains)[number]) =>
      d.kind === 'drain'
        ? d.params.pdbs
        : d.kind === 'drain-batch'
          ? d.params.nodes.flatMap((n) => n.pdbs)
          : [];
    const blocked = drains.filter((d) =>
      pdbsOf(d).some((p) => p.namespace === 'shop' && p.name === 'checkout'),
    );
    expect(blocked.length).toBeGreaterThan(0);
    for (const d of blocked) {
      expect(pdbsOf(d).find((p) => p.name === 'checkout')?.disruptionsAllowed).toBe(0);
      expect(d.notes?.join(' ')).toContain('shop/checkout');
    }
  });

  it('names Talos control planes apart from every kubeadm node and member; workers keep the name Talos gives them', async () => {
    const plan = buildPlan(inputsFor(await exampleSnapshot()));
    const taken = new Set([...plan.controlPlanes.map((x) => x.node), ...plan.workers.map((w) => w.node)]);
    for (const r of plan.controlPlanes.map((x) => x.replacement)) {
      expect(r.name).not.toBeNull();
      expect(taken.has(r.name!)).toBe(false);
    }
    // The kit writes no worker hostname: the run learns it from the Node that registers.
    expect(plan.workers.length).toBeGreaterThan(0);
    expect(plan.workers.every((w) => w.replacement.name === null)).toBe(true);
    const capi = buildPlan(inputsFor(await exampleSnapshot(), { target: { provisioner: 'capi' } }));
    expect(capi.controlPlanes.every((x) => x.replacement.name === null)).toBe(true);
    expect(capi.warnings.join(' ')).toContain('Cluster API');
  });

  it('after-care: bootstrap token, PKI copies, drill; no kube-proxy step without kube-proxy', async () => {
    const plan = buildPlan(inputsFor(await exampleSnapshot()));
    const kinds = stepsOfPhase(plan, 5).map((s) => s.kind);
    expect(kinds).toContain('delete-bootstrap-token');
    expect(kinds).toContain('wipe-pki-copies');
    expect(kinds).toContain('drill');
    // The example runs Cilium's kube-proxy replacement: there is no DaemonSet to relabel.
    expect(kinds).not.toContain('relabel-kube-proxy');
    const wipe = stepsOfPhase(plan, 5).find((s) => s.kind === 'wipe-pki-copies');
    expect(wipe?.kind === 'wipe-pki-copies' && wipe.params.copies.map((x) => x.path)).toContain(
      'etcd-before-migration.db',
    );
  });

  it('relabels kube-proxy when its selector lacks tier: node', async () => {
    const snap = await exampleSnapshot();
    snap.resources.daemonsets.push({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'kube-proxy', namespace: 'kube-system', labels: { 'k8s-app': 'kube-proxy' } },
      spec: {
        selector: { matchLabels: { 'k8s-app': 'kube-proxy' } },
        template: { metadata: { labels: { 'k8s-app': 'kube-proxy' } }, spec: { containers: [] } },
        updateStrategy: { type: 'RollingUpdate' },
      },
    });
    const plan = buildPlan(inputsFor(snap));
    const step = stepsOfPhase(plan, 5).find((s) => s.kind === 'relabel-kube-proxy');
    expect(step?.kind === 'relabel-kube-proxy' && step.params.labels).toEqual({
      'k8s-app': 'kube-proxy',
      tier: 'node',
    });
    expect(step?.destructive).toBe(true);
  });
});

describe('buildPlan and the Talos release', () => {
  it('an untabled patch: the plan targets it and warns which tabled facts it assumed', async () => {
    const plan = buildPlan(inputsFor(await exampleSnapshot(), { target: { talosVersion: 'v1.13.4' } }));
    expect(plan.target.talosVersion).toBe('v1.13.4');
    expect(plan.warnings).toContainEqual(
      expect.stringMatching(
        /^Talos v1\.13\.4 is not tabled; assumed the facts of v1\.13\.0 \(etcd 3\.6\.9, /,
      ),
    );
    const tabled = buildPlan(inputsFor(await exampleSnapshot(), { target: { talosVersion: 'v1.13.9' } }));
    expect(tabled.warnings.filter((w) => w.includes('not tabled'))).toEqual([]);
  });
});

describe('buildPlan refuses what cannot be planned', () => {
  it('replace with two voters (removing one loses quorum)', async () => {
    const snap = await exampleSnapshot();
    snap.etcd!.members = snap.etcd!.members.filter((m) => m.name !== 'cp-3');
    snap.etcd!.endpoints = snap.etcd!.endpoints.filter((e) => !e.endpoint.includes('10.20.0.13'));
    const input = inputsFor(snap, { strategy: 'replace' });
    expect(() => buildPlan(input)).toThrow(/loses quorum/);
    try {
      buildPlan(input);
    } catch (err) {
      expect(err instanceof FerryError && err.exitCode).toBe(2);
    }
    // surge can still go learner-first.
    expect(buildPlan(inputsFor(snap, { strategy: 'surge' })).etcd.voters).toBe(2);
  });

  it('surge when the endpoint is a control plane’s own address', async () => {
    const snap = await exampleSnapshot();
    snap.kubeadm.clusterConfiguration!.controlPlaneEndpoint = '10.20.0.11:6443';
    for (const cm of snap.resources.configmaps) {
      if (cm.metadata.name === 'cluster-info' && typeof cm['data']?.kubeconfig === 'string')
        cm['data'].kubeconfig = cm['data'].kubeconfig.replace('k8s-api.lab.example', '10.20.0.11');
    }
    const input = inputsFor(snap, { strategy: 'surge' });
    expect(input.facts.cluster.controlPlaneEndpoint.value?.node).toBe('cp-1');
    expect(() => buildPlan(input)).toThrow(/own address/);
    // replace keeps the address: cp-1 goes last, without load-balancer steps.
    const plan = buildPlan(inputsFor(snap, { strategy: 'replace' }));
    expect(subjectBlocks(stepsOfPhase(plan, 4))).toEqual(['cp-1']);
    expect(allSteps(plan).some((s) => s.kind === 'lb-remove' || s.kind === 'lb-add')).toBe(false);
  });

  it('an external etcd: exit 2 naming the topology, with --allow-blockers and without a member list too', async () => {
    const refusal = (input: ReturnType<typeof inputsFor>): FerryError => {
      try {
        buildPlan(input);
      } catch (e) {
        if (e instanceof FerryError) return e;
        throw e;
      }
      throw new Error('expected buildPlan to refuse');
    };
    const e = refusal(inputsFor(await externalEtcdSnapshot(), { allowBlockers: true }));
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(
      /^etcd topology is external \(the apiservers use https:\/\/10\.0\.1\.5:2379, https:\/\/10\.0\.1\.6:2379, https:\/\/10\.0\.1\.7:2379\): ferry plans control-plane swaps for stacked etcd only/,
    );
    expect(e.location).toEqual({
      file: join(EXTERNAL_ETCD_DIR, 'manifests', 'cp-1', 'kube-apiserver.yaml'),
      line: 1,
      object: 'kube-apiserver@cp-1 --etcd-servers',
    });
    expect(e.remediation).toMatch(/^move etcd onto the kubeadm control planes first/);
    // The topology comes first: no member list (the external etcd was not collected) changes nothing.
    const noEtcd = await externalEtcdSnapshot();
    delete noEtcd.etcd;
    noEtcd.manifest.parts = noEtcd.manifest.parts.filter((p) => p !== 'etcd');
    expect(refusal(inputsFor(noEtcd)).message).toMatch(/^etcd topology is external/);
    // kubeadm-config alone tells it too, and is where the error points then.
    const ccOnly = await externalEtcdSnapshot();
    ccOnly.staticPods = [];
    expect(refusal(inputsFor(ccOnly)).location).toMatchObject({
      file: join(EXTERNAL_ETCD_DIR, 'kubeadm-config.yaml'),
      line: 3,
      field: 'etcd.external',
    });
  });

  it('without an etcd member list', async () => {
    const snap = await exampleSnapshot();
    delete snap.etcd;
    snap.manifest.parts = snap.manifest.parts.filter((p) => p !== 'etcd');
    expect(() => buildPlan(inputsFor(snap))).toThrow(/etcd member list/);
  });
});
