/**
 * Gates: compare an observed world to a step's expected state (pure). Each section gives checks
 * with what was expected and what was seen, so a stopped run can say both and what to do.
 * A gate fails closed: it holds only when every check was seen to hold.
 * - `mismatch` with `unobserved`: the lookup failed (etcd did not answer, a 403 on EndpointSlices):
 *   it proves nothing either way, so it stops the run like a mismatch; only an explicit
 *   `--accept-unobserved CHECK` lets it pass (unobserved.ts).
 * - `unknown`: ferry has no way to observe it by design (a file on a node, a load balancer without
 *   a check command); it carries the question a person answers, and holds once confirmed.
 */
import {
  type Count,
  countMax,
  countMin,
  type EtcdExpectation,
  type ExpectedState,
  type MemberRef,
  type MemberState,
} from '../plan/expected-state.js';
import { memberLabel, nodeLabel } from '../plan/model.js';
import type { EtcdEndpointStatus, EtcdMemberInfo, EtcdView, PdbView } from '../ports/run.js';
import { type Bindings, resolveMember } from './bindings.js';
import { type Observed, objectKey, type World } from './observe.js';
import { unobservedHint } from './unobserved.js';

export type CheckStatus = 'ok' | 'mismatch' | 'unknown';

export interface Check {
  section: keyof ExpectedState;
  subject: string;
  expected: string;
  seen: string;
  status: CheckStatus;
  /** An operator's confirmation would settle this check. */
  confirm?: string;
  /** The observation itself failed (etcd or the API did not answer): a mismatch that proves nothing. */
  unobserved?: true;
}

export interface GateContext {
  bindings: Bindings;
  /** Ids of the plan's kubeadm members: never mistaken for a joining Talos member. */
  kubeadmIds: ReadonlySet<string>;
}

/** Every check was seen to hold (or, for what ferry cannot see, confirmed by a person). */
export function holds(checks: Check[]): boolean {
  return checks.every((c) => c.status === 'ok');
}

/** Nothing contradicts the expectation: what is left are questions a person can answer. */
export function onlyQuestionsLeft(checks: Check[]): boolean {
  return checks.every((c) => c.status === 'ok' || (c.status === 'unknown' && c.confirm !== undefined));
}

/** Whether the world could be seen well enough to say "it did not happen". */
export function observable(checks: Check[]): boolean {
  return checks.every((c) => !c.unobserved && c.status !== 'unknown');
}

export function mismatches(checks: Check[]): Check[] {
  return checks.filter((c) => c.status === 'mismatch');
}

function fmtCount(c: Count): string {
  return typeof c === 'number' ? String(c) : `${c.min}–${c.max}`;
}

function inCount(c: Count, n: number): boolean {
  return n >= countMin(c) && n <= countMax(c);
}

function check(
  section: keyof ExpectedState,
  subject: string,
  expected: string,
  seen: string,
  ok: boolean | undefined,
): Check {
  return { section, subject, expected, seen, status: ok === undefined ? 'unknown' : ok ? 'ok' : 'mismatch' };
}

/**
 * A yes/no fact looked up through a port: seen (ok or mismatch); a lookup that failed (a mismatch
 * marked unobserved, with its cause); no way to tell by design (unknown: a person confirms); or a
 * node whose name is not known yet (only a negative expectation holds for a machine not there).
 */
function lookedUp<T>(o: {
  section: 'loadBalancer' | 'apiservers' | 'machines';
  subject: string;
  expected: string;
  name: string | undefined;
  absentHolds: boolean;
  observed: Observed<T | undefined> | undefined;
  show: (v: T) => string;
  holds: (v: T) => boolean;
  cannotTell: string;
  confirm: string;
}): Check {
  const base = { section: o.section, subject: o.subject, expected: o.expected };
  if (o.name === undefined) {
    const ok = o.absentHolds;
    return { ...base, seen: 'its name is not known yet (not provisioned)', status: ok ? 'ok' : 'mismatch' };
  }
  const r = o.observed ?? { ok: false, error: 'not observed' };
  if (!r.ok) {
    return {
      ...base,
      seen: `cannot read it: ${r.error}`,
      status: 'mismatch',
      unobserved: true,
    };
  }
  if (r.value === undefined) return { ...base, seen: o.cannotTell, status: 'unknown', confirm: o.confirm };
  return { ...base, seen: o.show(r.value), status: o.holds(r.value) ? 'ok' : 'mismatch' };
}

export function evaluate(expect: ExpectedState, world: World, ctx: GateContext): Check[] {
  const out: Check[] = [];
  if (expect.etcd) out.push(...evalEtcd(expect.etcd, world, ctx));

  for (const n of expect.nodes ?? []) {
    const label = nodeLabel(n.node);
    const name = ctx.bindings.nodeName(n.node);
    if (!name) {
      // A replacement whose provisioning has not named it yet is not there.
      out.push(
        check(
          'nodes',
          label,
          n.exists ? 'exists' : 'absent',
          'its name is not known yet (not provisioned)',
          !n.exists,
        ),
      );
      continue;
    }
    const o = world.nodes.get(name);
    if (!o?.ok) {
      out.push({
        ...check(
          'nodes',
          name,
          n.exists ? 'exists' : 'absent',
          `cannot read it: ${o ? o.error : 'not observed'}`,
          false,
        ),
        unobserved: true,
      });
      continue;
    }
    const node = o.value.node;
    out.push(
      check(
        'nodes',
        name,
        n.exists ? 'Node exists' : 'no Node',
        node ? 'Node exists' : 'no Node',
        !!node === n.exists,
      ),
    );
    if (!node) continue;
    if (n.ready !== undefined)
      out.push(
        check(
          'nodes',
          name,
          n.ready ? 'Ready' : 'not Ready',
          node.ready ? 'Ready' : 'not Ready',
          node.ready === n.ready,
        ),
      );
    if (n.cordoned !== undefined) {
      const s = (v: boolean) => (v ? 'cordoned' : 'schedulable');
      out.push(check('nodes', name, s(n.cordoned), s(node.unschedulable), node.unschedulable === n.cordoned));
    }
    if (n.drained !== undefined) {
      const left = o.value.evictable ?? [];
      out.push(
        check(
          'nodes',
          name,
          n.drained ? 'drained (no evictable pod)' : 'pods running',
          left.length === 0
            ? 'no evictable pod'
            : `${left.length} evictable pod(s): ${left.slice(0, 5).join(', ')}${left.length > 5 ? ', …' : ''}`,
          (left.length === 0) === n.drained,
        ),
      );
    }
  }

  for (const l of expect.loadBalancer ?? []) {
    const name = ctx.bindings.nodeName(l.node);
    const s = (x: boolean) => (x ? 'in rotation' : 'out of rotation');
    out.push(
      lookedUp({
        section: 'loadBalancer',
        subject: `${name ?? nodeLabel(l.node)} (${ctx.bindings.nodeAddress(l.node) ?? l.address ?? '?'}:${l.port})`,
        expected: s(l.inRotation),
        name,
        absentHolds: !l.inRotation,
        observed: name === undefined ? undefined : world.loadBalancer.get(name),
        show: s,
        holds: (v) => v === l.inRotation,
        cannotTell: 'the load balancer cannot be asked',
        confirm: `Is ${name ?? nodeLabel(l.node)} ${s(l.inRotation)} in the load balancer?`,
      }),
    );
  }

  for (const a of expect.apiservers ?? []) {
    const name = ctx.bindings.nodeName(a.node);
    const s = (x: boolean) => (x ? 'apiserver serving' : 'apiserver out of service');
    out.push(
      lookedUp({
        section: 'apiservers',
        subject: name ?? nodeLabel(a.node),
        expected: s(a.serving),
        name,
        absentHolds: !a.serving,
        observed: name === undefined ? undefined : world.apiservers.get(name),
        show: s,
        holds: (v) => v === a.serving,
        cannotTell: 'no way to tell (no address, and no kubernetes EndpointSlice entry)',
        confirm: `Is the apiserver on ${name ?? nodeLabel(a.node)} ${a.serving ? 'serving' : 'out of service'}?`,
      }),
    );
  }

  for (const m of expect.machines ?? []) {
    const name = ctx.bindings.nodeName(m.node);
    out.push(
      lookedUp({
        section: 'machines',
        subject: name ?? nodeLabel(m.node),
        expected: `machine ${m.state}`,
        name,
        absentHolds: false,
        observed: name === undefined ? undefined : world.machines.get(name),
        show: (v) => `machine ${v}`,
        holds: (v) => v === m.state,
        cannotTell: 'the provisioner cannot tell',
        confirm: `Is the machine ${name ?? nodeLabel(m.node)} ${m.state}?`,
      }),
    );
  }

  if (expect.endpoint) {
    out.push(
      check(
        'endpoint',
        'control-plane endpoint',
        '/readyz answers 200',
        world.endpoint ? '/readyz answers 200' : '/readyz fails',
        world.endpoint === true,
      ),
    );
  }

  if (expect.budgets) out.push(...budgetChecks(world.budgets));

  for (const c of expect.commands ?? []) {
    out.push({
      ...check('commands', c.command.run, 'exit 0', 'not run by ferry', undefined),
      confirm: `Does \`${c.command.run}\` exit 0?`,
    });
  }

  for (const o of expect.objects ?? []) {
    const key = objectKey(o);
    const r = world.objects.get(key);
    const subject = `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
    if (!r?.ok) {
      out.push({
        ...check(
          'objects',
          subject,
          o.present ? 'present' : 'absent',
          `cannot read it: ${r ? r.error : 'not observed'}`,
          false,
        ),
        unobserved: true,
      });
      continue;
    }
    out.push(
      check(
        'objects',
        subject,
        o.present ? 'present' : 'absent',
        r.value ? 'present' : 'absent',
        !!r.value === o.present,
      ),
    );
    if (r.value && o.fields) {
      for (const [path, want] of Object.entries(o.fields)) {
        const got = fieldAt(r.value, path);
        const seen =
          got === undefined
            ? '(unset)'
            : typeof got === 'object' && got !== null && !Array.isArray(got)
              ? '(set)'
              : String(got);
        // "(unset)" and "(set)" ask for a field's absence or presence (an Argo CD sync policy block).
        out.push(check('objects', `${subject} ${path}`, want, seen, seen === want));
      }
    }
  }

  for (const f of expect.files ?? []) {
    const v = world.files.get(f.path);
    const where = f.where.kind === 'workstation' ? 'workstation' : `node ${f.where.node}`;
    out.push({
      ...check(
        'files',
        `${f.path} on ${where}`,
        f.exists ? 'exists' : 'absent',
        v === undefined ? "out of ferry's reach" : v ? 'exists' : 'absent',
        v === undefined ? undefined : v === f.exists,
      ),
      ...(v === undefined && {
        confirm: `Does ${f.path} ${f.exists ? 'exist' : 'no longer exist'} on ${where}?`,
      }),
    });
  }

  if (expect.audit) {
    const accepted = new Set(expect.audit.acceptedBlockers);
    const open = world.audit.blockers.filter((x) => !accepted.has(x.fingerprint));
    out.push(
      check(
        'audit',
        'preflight audit',
        `at most ${expect.audit.maxBlockers} unaccepted blocker(s)`,
        open.length === 0
          ? 'no unaccepted blocker'
          : `${open.length}: ${open.map((x) => x.ruleId).join(', ')}`,
        open.length <= expect.audit.maxBlockers,
      ),
    );
  }

  if (expect.operator) {
    const yes = world.confirmed.has(expect.operator.confirms);
    out.push({
      ...check(
        'operator',
        'operator',
        `confirms: ${expect.operator.confirms}`,
        yes ? 'confirmed' : 'not confirmed yet',
        yes ? true : undefined,
      ),
      confirm: expect.operator.confirms,
    });
  }
  return out.map((c) =>
    c.status === 'unknown' && c.confirm !== undefined && world.confirmed.has(c.confirm)
      ? { ...c, status: 'ok', seen: `${c.seen}; the operator confirmed it` }
      : c,
  );
}

export function fieldAt(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

// ---- etcd -------------------------------------------------------------------------------------

function okStatus(view: EtcdView, id: string): Extract<EtcdEndpointStatus, { ok: true }> | undefined {
  const s = view.statuses.find((x) => x.memberId === id);
  return s?.ok ? s : undefined;
}

function memberName(m: EtcdMemberInfo): string {
  return m.name || `<unstarted ${m.id}>`;
}

/** "cp-1 voter (leader), cp-2 voter, cp-1-talos learner; unhealthy: cp-3". */
export function describeEtcd(view: EtcdView): string {
  const parts = view.members.map(
    (m) =>
      `${memberName(m)} ${m.isLearner ? 'learner' : 'voter'}${m.id === view.leaderId ? ' (leader)' : ''}`,
  );
  const unhealthy = view.members.filter((m) => !view.healthy.includes(m.id)).map(memberName);
  return `${parts.join(', ')}${unhealthy.length ? `; unhealthy: ${unhealthy.join(', ')}` : ''}${view.leaderId ? '' : '; no leader'}`;
}

function stateOf(m: EtcdMemberInfo | undefined): MemberState | 'learner' {
  if (!m) return 'absent';
  return m.isLearner ? 'learner' : 'voter';
}

function memberStateOk(want: MemberState, m: EtcdMemberInfo | undefined): boolean {
  switch (want) {
    case 'voter':
      return !!m && !m.isLearner && m.name !== '';
    case 'learner-or-voter':
      return !!m;
    case 'joining':
      return true;
    case 'absent':
      return !m;
  }
}

function evalEtcd(e: EtcdExpectation, world: World, ctx: GateContext): Check[] {
  const out: Check[] = [];
  const r = world.etcd;
  if (!r?.ok) {
    out.push({
      ...check(
        'etcd',
        'etcd',
        `${fmtCount(e.voters)} voter(s)`,
        `etcd cannot be read: ${r ? r.error : 'not observed'}`,
        false,
      ),
      unobserved: true,
    });
    return out;
  }
  const view = r.value;
  const seen = describeEtcd(view);
  const voters = view.members.filter((m) => !m.isLearner).length;
  const learners = view.members.length - voters;
  out.push(check('etcd', 'voters', fmtCount(e.voters), `${voters} (${seen})`, inCount(e.voters, voters)));
  out.push(check('etcd', 'learners', fmtCount(e.learners), String(learners), inCount(e.learners, learners)));
  out.push(
    check(
      'etcd',
      'members',
      fmtCount(e.total),
      String(view.members.length),
      inCount(e.total, view.members.length),
    ),
  );

  const resolve = (ref: MemberRef) => resolveMember(ref, view.members, ctx.bindings, ctx.kubeadmIds);
  let except: EtcdMemberInfo | undefined;
  if (e.healthy !== 'all') {
    const x = resolve(e.healthy.allExcept);
    if (x.found) except = x.member;
  }
  // A member the step expects to be joining (or just joined) cannot be asked to be healthy yet:
  // Talos lists it before its etcd starts. The steps that need it healthy expect it a voter.
  const settling = new Set(
    e.members
      .filter((me) => me.state === 'joining' || me.state === 'learner-or-voter')
      .map((me) => resolve(me.member))
      .flatMap((x) => (x.found ? [x.member.id] : [])),
  );
  const unhealthy = view.members.filter(
    (m) => m !== except && !settling.has(m.id) && !view.healthy.includes(m.id),
  );
  out.push(
    check(
      'etcd',
      'health',
      e.healthy === 'all'
        ? 'every member healthy'
        : `every member but ${memberLabel(e.healthy.allExcept)} healthy`,
      unhealthy.length === 0 ? 'healthy' : `unhealthy: ${unhealthy.map(memberName).join(', ')}`,
      unhealthy.length === 0,
    ),
  );

  for (const me of e.members) {
    const x = resolve(me.member);
    const m = x.found ? x.member : undefined;
    const label = x.found && x.member.name ? x.member.name : memberLabel(me.member);
    const note = !x.found && x.note ? ` (${x.note})` : '';
    out.push(check('etcd', `member ${label}`, me.state, `${stateOf(m)}${note}`, memberStateOk(me.state, m)));
  }

  if (e.leader) {
    const ref = 'is' in e.leader ? e.leader.is : e.leader.isNot;
    const x = resolve(ref);
    const leader = view.members.find((m) => m.id === view.leaderId);
    const leaderName = leader ? memberName(leader) : 'no leader';
    const isIt = x.found && x.member.id === view.leaderId;
    out.push(
      check(
        'etcd',
        'leader',
        'is' in e.leader ? `${memberLabel(ref)} leads` : `${memberLabel(ref)} does not lead`,
        `${leaderName} leads`,
        view.leaderId === undefined ? false : 'is' in e.leader ? isIt : !isIt,
      ),
    );
  }

  if (e.caughtUp) {
    const x = resolve(e.caughtUp.member);
    const leaderStatus = view.leaderId ? okStatus(view, view.leaderId) : undefined;
    const mine = x.found ? okStatus(view, x.member.id) : undefined;
    let seenLag = 'unknown';
    let ok = false;
    if (mine && leaderStatus) {
      const lag = BigInt(leaderStatus.raftIndex) - BigInt(mine.raftAppliedIndex);
      seenLag = `${lag} entries behind`;
      ok = lag <= BigInt(e.caughtUp.maxIndexLag);
    } else if (!x.found) seenLag = 'not in the member list';
    else if (!mine) seenLag = 'its status does not answer';
    else seenLag = 'no leader';
    out.push(
      check(
        'etcd',
        `${memberLabel(e.caughtUp.member)} caught up`,
        `within ${e.caughtUp.maxIndexLag} entries of the leader`,
        seenLag,
        ok,
      ),
    );
  }
  return out;
}

/**
 * One check per PodDisruptionBudget below its desired healthy pods, or one that all are at it. A
 * list the server refused is not observed (never "none below"); a budget whose controller has not
 * filled its status is below until it has.
 */
function budgetChecks(r: Observed<PdbView[]> | undefined): Check[] {
  const expected = 'at least its desired healthy pods';
  if (!r?.ok)
    return [
      {
        ...check(
          'budgets',
          'PodDisruptionBudgets',
          expected,
          `cannot list them: ${r ? r.error : 'not observed'}`,
          false,
        ),
        unobserved: true,
      },
    ];
  const below = r.value.filter(
    (b) => b.currentHealthy == null || b.desiredHealthy == null || b.currentHealthy < b.desiredHealthy,
  );
  if (below.length === 0)
    return [check('budgets', 'PodDisruptionBudgets', expected, `all ${r.value.length} at it`, true)];
  return below.map((b) =>
    check(
      'budgets',
      `PodDisruptionBudget ${b.namespace}/${b.name}`,
      expected,
      b.currentHealthy == null || b.desiredHealthy == null
        ? 'no status.currentHealthy/desiredHealthy yet'
        : `${b.currentHealthy} healthy of ${b.desiredHealthy} desired`,
      false,
    ),
  );
}

/** Lines "expected …, saw …" for the mismatches (and unknowns, marked). */
export function describeChecks(checks: Check[], opts: { includeUnknown?: boolean } = {}): string[] {
  return checks
    .filter((c) => c.status === 'mismatch' || (opts.includeUnknown && c.status === 'unknown'))
    .map(
      (c) =>
        `${c.status === 'unknown' ? '(unknown) ' : c.unobserved ? '(unobserved) ' : ''}${c.section} ${c.subject}: expected ${c.expected}, saw ${c.seen}`,
    );
}

/** What to do about the first kinds of mismatch, in operator words. */
export function remediationFor(checks: Check[]): string {
  const bad = mismatches(checks);
  const sections = new Set(bad.map((c) => c.section));
  const tips: string[] = [];
  const hint = unobservedHint(checks);
  if (hint) tips.push(hint);
  if (sections.has('etcd')) {
    tips.push(
      'inspect etcd (etcdctl member list -w table; etcdctl endpoint health --cluster; etcdctl endpoint status --cluster -w table): a member that is unhealthy, a learner that does not catch up or an unexpected member must be dealt with first',
    );
  }
  if (sections.has('nodes'))
    tips.push('check the nodes (kubectl get nodes -o wide; kubectl describe node NAME) and their pods');
  if (sections.has('endpoint'))
    tips.push(
      'the API does not answer through the control-plane endpoint: check the load balancer and every apiserver',
    );
  if (sections.has('machines'))
    tips.push('check the machine with the provisioner (its console, talosctl -n ADDRESS version)');
  if (sections.has('loadBalancer')) tips.push('check the load balancer backends');
  if (sections.has('apiservers'))
    tips.push('check the apiserver static pod and the default/kubernetes EndpointSlice');
  if (sections.has('audit')) tips.push('fix the blockers ferry audit reports, rebuild the plan');
  if (sections.has('budgets'))
    tips.push(
      "a workload is below its PodDisruptionBudget: find why its pods are not Ready (kubectl get pdb -A; kubectl describe pdb -n NS NAME; its pods' events) and let it recover before the next batch drains",
    );
  tips.push('then run `ferry run --resume` (the run re-observes before it acts)');
  return tips.join('; ');
}
