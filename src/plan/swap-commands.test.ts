/**
 * The etcd commands a swap's runbook tells a person to type reach the right member: MoveLeader at
 * the member that leads, MemberRemove through another member at the address it really has.
 */
import { expect, it } from 'vitest';
import type { KubeadmMemberRef } from './expected-state.js';
import { allSteps, type StepOf } from './model.js';
import { examplePlan } from './testing-example.js';

it('MemberRemove goes through the Talos member that joined, at the address it took over (replace)', async () => {
  const plan = await examplePlan({ strategy: 'replace' });
  const removals = allSteps(plan).filter(
    (s): s is StepOf<'etcd-remove-member'> => s.kind === 'etcd-remove-member',
  );
  const viaTalos = removals.filter((s) => s.params.via[0]?.kind === 'talos');
  expect(viaTalos.length).toBeGreaterThan(0);
  for (const s of viaTalos) {
    const via = s.params.via[0]!;
    if (via.kind !== 'talos') continue;
    // With replace, the Talos machine takes the address of the node it replaces.
    const address = plan.controlPlanes.find((c) => c.node === via.replaces)?.replacement.address;
    expect(address, s.id).toBeTruthy();
    const run = s.action.commands.map((c) => c.run).join('\n');
    expect(run, s.id).toContain(
      `-n ${address} etcd remove-member ${(s.params.member as KubeadmMemberRef).idHex}`,
    );
    expect(run, s.id).not.toMatch(/<ADDRESS_OF/);
  }
  // Through a kubeadm member: its own client URL, never the member being removed.
  for (const s of removals.filter((x) => x.params.via[0]?.kind === 'kubeadm')) {
    const via = s.params.via[0] as KubeadmMemberRef;
    const run = s.action.commands.map((c) => c.run).join('\n');
    expect(run, s.id).toContain(via.clientURL!);
    expect(run, s.id).not.toContain((s.params.member as KubeadmMemberRef).clientURL!);
  }
});

it('MoveLeader is sent to the old member itself, the one that leads', async () => {
  const plan = await examplePlan({ strategy: 'surge' });
  for (const s of allSteps(plan).filter(
    (x): x is StepOf<'etcd-move-leader'> => x.kind === 'etcd-move-leader',
  )) {
    const from = s.params.from as KubeadmMemberRef;
    const run = s.action.commands.map((c) => c.run).join('\n');
    expect(run, s.id).toMatch(new RegExp(`--endpoints[= ]${from.clientURL!.replace(/[.]/g, '\\.')}`));
  }
});
