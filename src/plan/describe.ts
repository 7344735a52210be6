/**
 * Expected state in words, one line per section, for the runbook (md, html) and for the run's
 * gate messages ("expected: etcd 4 voters, 0 learners …; seen: …").
 */
import type { Command, Count, EtcdExpectation, ExpectedState, MemberExpectation } from './expected-state.js';
import { memberLabel, nodeLabel } from './model.js';

export function describeCount(c: Count, noun: string): string {
  const plural = (n: number) => (n === 1 ? noun : `${noun}s`);
  if (typeof c === 'number') return `${c} ${plural(c)}`;
  return `${c.min}–${c.max} ${plural(c.max)}`;
}

const STATE_WORDS: Record<MemberExpectation['state'], string> = {
  voter: 'voter',
  'learner-or-voter': 'learner or already voter',
  joining: 'joining (absent, learner or voter)',
  absent: 'absent',
};

export function describeEtcd(e: EtcdExpectation): string {
  const parts = [
    `${describeCount(e.total, 'member')}: ${describeCount(e.voters, 'voter')}, ${describeCount(e.learners, 'learner')}`,
    e.healthy === 'all'
      ? 'every voter healthy'
      : `every voter but ${memberLabel(e.healthy.allExcept)} healthy`,
  ];
  const named = e.members.filter((m) => m.member.kind === 'talos' || m.state !== 'voter');
  if (named.length > 0)
    parts.push(named.map((m) => `${memberLabel(m.member)} ${STATE_WORDS[m.state]}`).join(', '));
  if (e.leader)
    parts.push(
      'is' in e.leader ? `${memberLabel(e.leader.is)} leads` : `${memberLabel(e.leader.isNot)} does not lead`,
    );
  if (e.caughtUp)
    parts.push(`${memberLabel(e.caughtUp.member)} within ${e.caughtUp.maxIndexLag} entries of the leader`);
  return parts.join('; ');
}

export function describeCommand(c: Command): string {
  return c.where.kind === 'node' ? `[on ${c.where.node}] ${c.run}` : c.run;
}

/** One line per checked section. */
export function describeExpectation(e: ExpectedState): string[] {
  const out: string[] = [];
  if (e.etcd) out.push(`etcd: ${describeEtcd(e.etcd)}`);
  for (const n of e.nodes ?? []) {
    const bits = [n.exists ? 'exists' : 'absent'];
    if (n.ready !== undefined) bits.push(n.ready ? 'Ready' : 'not Ready');
    if (n.cordoned !== undefined) bits.push(n.cordoned ? 'cordoned' : 'schedulable');
    if (n.drained) bits.push('drained');
    out.push(`Node ${nodeLabel(n.node)}: ${bits.join(', ')}`);
  }
  for (const b of e.loadBalancer ?? [])
    out.push(
      `load balancer: ${b.address ?? nodeLabel(b.node)}:${b.port} ${b.inRotation ? 'in' : 'out of'} rotation`,
    );
  for (const a of e.apiservers ?? [])
    out.push(
      `apiserver on ${nodeLabel(a.node)} ${a.serving ? 'behind' : 'not behind'} the kubernetes Service`,
    );
  for (const m of e.machines ?? []) out.push(`machine ${nodeLabel(m.node)}: ${m.state}`);
  if (e.endpoint) out.push('GET /readyz through the endpoint answers 200');
  if (e.budgets) out.push('every PodDisruptionBudget has its desired healthy pods');
  for (const c of e.commands ?? []) out.push(`\`${describeCommand(c.command)}\` exits 0`);
  for (const o of e.objects ?? []) {
    const id = `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
    const fields = Object.entries(o.fields ?? {}).map(([k, v]) => `${k}=${v}`);
    out.push(`${id} ${o.present ? 'present' : 'absent'}${fields.length ? ` with ${fields.join(', ')}` : ''}`);
  }
  for (const f of e.files ?? []) out.push(`file ${f.path} ${f.exists ? 'exists' : 'absent'}`);
  if (e.audit)
    out.push(
      e.audit.maxBlockers === 0
        ? 'audit: no unsuppressed blocker'
        : `audit: no unsuppressed blocker but the ${e.audit.maxBlockers} accepted`,
    );
  if (e.operator) out.push(`operator confirms: ${e.operator.confirms}`);
  return out;
}

export function formatSeconds(s: number): string {
  if (s % 3600 === 0) return `${s / 3600} h`;
  if (s >= 60 && s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}
