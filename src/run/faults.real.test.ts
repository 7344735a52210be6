import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExecProvisioner } from '../adapters/provisioners/exec.js';
import { assemble } from '../app/assemble.js';
import { LAB_RUN_DEFAULTS, type LabRunSetup, prepareLabRun } from '../app/rehearse.js';
import { runSession, type SessionResult } from '../app/session.js';
import { missingReason } from '../lab/etcd/binaries.js';
import { disposeAllLabs } from '../lab/etcd/cluster.js';
import { skipFor } from '../lab/testing-binaries.js';
import { allSteps, type PhaseId } from '../plan/model.js';
import { workerRefusals } from '../plan/refusals.js';
import type { RunOptions } from './deps.js';
import { Journal } from './journal.js';
import { TerminalOperator } from './operator.js';

// Injected faults must stop the run at the right gate with a useful message. Each case has its own
// lab on 127.0.46–50.x (this file's subnets).
afterAll(async () => {
  await disposeAllLabs();
});

const missing = (await missingReason('3.4')) ?? (await missingReason('3.5'));

async function withLab<T>(
  subnet: number,
  fn: (setup: LabRunSetup, dir: string) => Promise<T>,
  opts: { surgeReplicas?: boolean } = {},
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-fault-'));
  const setup = await prepareLabRun({
    snapshotPath: 'examples/lab-cluster',
    dir,
    subnet,
    log: () => {},
    ...opts,
  });
  try {
    return await fn(setup, dir);
  } finally {
    await setup.lab.dispose();
    await rm(dir, { recursive: true, force: true });
  }
}

async function runOn(
  setup: LabRunSetup,
  dir: string,
  opts: { phases: PhaseId[]; run?: RunOptions; provisionCmd?: string },
): Promise<SessionResult & { log: string[] }> {
  const log: string[] = [];
  const a = assemble({
    connection: { kubeconfig: setup.lab.kubeconfigPath, etcd: setup.lab.etcdClientSettings() },
    provisioner: 'lab',
    lab: setup.control,
    operator: new TerminalOperator({
      say: (l) => log.push(l),
      confirmDir: join(dir, 'confirm'),
      interactive: false,
    }),
    probes: false,
    log: (l) => log.push(l),
  });
  if (opts.provisionCmd) a.ports.provisioner = new ExecProvisioner({ provisionCmd: opts.provisionCmd });
  try {
    const s = await runSession({
      planFile: setup.planFile,
      plan: setup.plan,
      ports: a.ports,
      log: (l) => log.push(l),
      run: {
        ...LAB_RUN_DEFAULTS,
        ...opts.run,
        timeouts: { ...LAB_RUN_DEFAULTS.timeouts, ...opts.run?.timeouts },
        phases: opts.phases,
      },
    });
    return { ...s, log };
  } finally {
    a.close();
  }
}

/**
 * The run stopped at `stepId` with a gate error (exit 3); nothing destructive was started for the
 * node it stopped at, nor twice anywhere.
 */
function expectStoppedAt(s: SessionResult & { log: string[] }, stepId: string, setup: LabRunSetup): string {
  expect(s.result.status, s.log.join('\n')).toBe('stopped');
  expect(s.result.stoppedAt, s.result.error?.message).toBe(stepId);
  expect(s.result.error?.kind).toBe('gate');
  expect(s.result.error?.exitCode).toBe(3);
  expect(s.result.error?.remediation).toMatch(/resume/);
  const j = Journal.open(s.journalFile, { readonly: true });
  try {
    expect(j.lastStates().get(stepId)?.state).toBe('stopped');
    const subject = stepId.split('.').at(-1);
    for (const st of allSteps(setup.plan)) {
      if (!st.destructive) continue;
      expect(j.actionCount(st.id), st.id).toBeLessThanOrEqual(1);
      if (st.subject === subject) expect(j.actionCount(st.id), st.id).toBe(0);
    }
  } finally {
    j.close();
  }
  return s.result.error!.message;
}

function stepOf(setup: LabRunSetup, kind: string, subject: string): string {
  const s = allSteps(setup.plan).find((x) => x.kind === kind && x.subject === subject);
  if (!s) throw new Error(`no ${kind} step for ${subject}`);
  return s.id;
}

describe.skipIf(skipFor(missing))('injected faults stop the run at the right gate', () => {
  it('a member that never catches up stops the wait for it, naming the member and what etcd shows', async () => {
    await withLab(46, async (setup, dir) => {
      const { node: cp, replacement } = setup.plan.controlPlanes[0]!;
      await setup.lab.inject({ kind: 'member-never-catches-up', node: replacement.name! });
      const s = await runOn(setup, dir, {
        phases: [0, 2],
        run: { timeouts: { 'wait-member-joined': 6, 'wait-member-voter': 6 } },
      });
      // Talos listed its learner (joined), but it never caught up: the wait for a voter stops.
      const msg = expectStoppedAt(s, stepOf(setup, 'wait-member-voter', cp), setup);
      expect(msg).toContain(`verification of ${stepOf(setup, 'wait-member-voter', cp)}`);
      expect(msg).toContain(`etcd member ${replacement.name}: expected voter, saw learner`);
      expect(msg).toMatch(/etcd health: expected every member healthy, saw unhealthy: <unstarted \d+>/);
      expect(msg).toContain(
        `etcd ${replacement.name} caught up: expected within 1000 entries of the leader, saw its status does not answer`,
      );
      // No membership change beyond Talos's own learner add happened.
      const members = await setup.lab.etcd.memberList();
      expect(members.filter((m) => !m.isLearner)).toHaveLength(3);
    });
  }, 180_000);

  it('a node that never gets Ready stops the wait for it', async () => {
    await withLab(47, async (setup, dir) => {
      const { node: cp, replacement } = setup.plan.controlPlanes[0]!;
      await setup.lab.inject({ kind: 'node-never-ready', node: replacement.name! });
      const s = await runOn(setup, dir, { phases: [0, 2], run: { timeouts: { 'wait-node-ready': 6 } } });
      const msg = expectStoppedAt(s, stepOf(setup, 'wait-node-ready', cp), setup);
      expect(msg).toContain(`nodes ${replacement.name}: expected Ready, saw not Ready`);
    });
  }, 180_000);

  it('without --surge-replicas the plan refuses naming the PDB, and a drain it blocks stops there, restores the cordon and deletes nothing', async () => {
    await withLab(
      48,
      async (setup, dir) => {
        // The rehearsal plans with --surge-replicas; without it, `ferry plan` refuses this plan.
        const refusals = workerRefusals(setup.plan.workerRoll, { failOnOutage: false });
        expect(refusals.map((r) => r.lines.join('\n')).join('\n')).toContain('shop/checkout');
        expect(refusals[0]?.remedy).toContain('--surge-replicas');
        // Workers come after the control planes (phase 3 expects Talos etcd members).
        // The bare pod default/netshoot is accepted, as the rehearsal does: this test is about the budget.
        const s = await runOn(setup, dir, {
          phases: [0, 2, 3],
          run: { drainTimeoutSeconds: 5, evictBarePods: true },
        });
        const stopped = s.result.stoppedAt!;
        expect(stopped, s.result.error?.message).toMatch(/^3\.\d+\.drain-batch\.worker-\d$/);
        const msg = expectStoppedAt(s, stopped, setup);
        expect(msg).toContain('blocked by PodDisruptionBudget shop/checkout');
        expect(msg).toContain('The disruption budget checkout needs 2 healthy pods and has 2 currently');
        const step = allSteps(setup.plan).find((x) => x.id === stopped)!;
        const batch = step.kind === 'drain-batch' ? step.params.nodes.flatMap((n) => n.node.name ?? []) : [];
        expect(batch.length).toBeGreaterThan(0);
        const kube = assemble({
          connection: { kubeconfig: setup.lab.kubeconfigPath, etcd: setup.lab.etcdClientSettings() },
          provisioner: 'lab',
          lab: setup.control,
          operator: new TerminalOperator({ say: () => {}, confirmDir: dir, interactive: false }),
          probes: false,
          log: () => {},
        });
        try {
          // Every node of the stopped batch is schedulable again; checkout still runs on one of them.
          let checkout = false;
          for (const node of batch) {
            expect((await kube.kube.getNode(node))?.unschedulable, node).toBe(false);
            const pods = await kube.kube.podsOnNode(node);
            if (pods.some((p) => p.namespace === 'shop' && p.name.startsWith('checkout-') && !p.terminating))
              checkout = true;
          }
          expect(checkout).toBe(true);
        } finally {
          kube.close();
        }
        expect(setup.lab.evictionLog.violations()).toEqual([]);
        expect(
          setup.lab.evictionLog.all().some((e) => e.outcome === 'refused' && e.pdb?.includes('checkout')),
        ).toBe(true);
        for (const node of batch)
          expect(s.log.join('\n')).toContain(`restored: ${node} is schedulable again`);
      },
      { surgeReplicas: false },
    );
  }, 240_000);

  it('a failing provision command stops at the provision step with its exit code and output', async () => {
    await withLab(49, async (setup, dir) => {
      const { node: cp, replacement } = setup.plan.controlPlanes[0]!;
      const s = await runOn(setup, dir, {
        phases: [0, 2],
        provisionCmd:
          'echo "creating $NODE_NAME ($ROLE) for $REPLACES"; echo "quota exceeded for instances" >&2; exit 7',
      });
      const msg = expectStoppedAt(s, stepOf(setup, 'provision', cp), setup);
      expect(msg).toContain('exited with code 7');
      expect(msg).toContain('quota exceeded for instances');
      expect(s.log.join('\n')).toContain(`creating ${replacement.name} (controlplane) for ${cp}`);
      expect(s.result.error?.remediation).toContain('--provision-cmd');
    });
  }, 180_000);

  it('one API instance down stops the first gate, naming the instance', async () => {
    await withLab(50, async (setup, dir) => {
      const down = setup.plan.controlPlanes[2]!.node;
      await setup.lab.inject({ kind: 'api-down', node: down });
      const s = await runOn(setup, dir, { phases: [0, 2], run: { timeouts: { gate: 5 } } });
      const gate = allSteps(setup.plan).find((x) => x.kind === 'gate')!.id;
      const msg = expectStoppedAt(s, gate, setup);
      expect(msg).toContain(`apiservers ${down}: expected apiserver serving, saw apiserver out of service`);
    });
  }, 180_000);
});
