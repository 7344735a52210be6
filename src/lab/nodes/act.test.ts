import { describe, expect, it } from 'vitest';
import { actConcurrently, actionObject } from './act.js';
import type { Action } from './world.js';

const patch = (path: string, why = path): Action => ({ kind: 'patch', path, patch: {}, why });

/** Runs the actions through actConcurrently, each "write" resolving when the test lets it. */
async function run(actions: Action[], limit: number) {
  const started: string[] = [];
  const finished: string[] = [];
  let inFlight = 0;
  let most = 0;
  const pending: (() => void)[] = [];
  const done = actConcurrently(actions, limit, async (a) => {
    started.push(a.why);
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise<void>((r) => pending.push(r));
    inFlight--;
    finished.push(a.why);
  });
  // Let every write in flight answer, round after round, until all are done.
  for (let i = 0; i < 100 && finished.length < actions.length; i++) {
    await new Promise((r) => setImmediate(r));
    for (const r of pending.splice(0)) r();
  }
  await done;
  return { started, finished, most };
}

describe('actConcurrently', () => {
  it("writes to different objects go out together, at most `limit` at a time (each kubelet's Lease on its own)", async () => {
    const leases = Array.from({ length: 12 }, (_, i) =>
      patch(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n${i}`),
    );
    const r = await run(leases, 8);
    expect(r.most).toBe(8);
    expect(r.finished).toHaveLength(12);
  });

  it('actions on one object keep the decided order and never overlap: a pod deleted, then created again under its name', async () => {
    const pods = '/api/v1/namespaces/a/pods';
    const actions: Action[] = [
      { kind: 'delete', path: `${pods}/db-0`, why: 'delete db-0' },
      patch('/api/v1/nodes/n1', 'taint n1'),
      {
        kind: 'create',
        path: pods,
        body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'db-0', namespace: 'a' } },
        why: 'create db-0',
      },
      patch('/api/v1/nodes/n1/status', 'status n1'),
      { kind: 'bind', namespace: 'a', name: 'db-0', node: 'n2', why: 'bind db-0' },
    ];
    const r = await run(actions, 8);
    // Two objects: db-0 and n1, each a lane of its own, in flight together.
    expect(r.most).toBe(2);
    const order = (names: string[]) => r.finished.filter((w) => names.includes(w));
    expect(order(['delete db-0', 'create db-0', 'bind db-0'])).toEqual([
      'delete db-0',
      'create db-0',
      'bind db-0',
    ]);
    expect(order(['taint n1', 'status n1'])).toEqual(['taint n1', 'status n1']);
  });

  it('names the object an action writes: a node and its status are one, a pod and its binding are one', () => {
    expect(actionObject(patch('/api/v1/nodes/n1/status'))).toBe(actionObject(patch('/api/v1/nodes/n1')));
    expect(actionObject({ kind: 'bind', namespace: 'a', name: 'p', node: 'n', why: '' })).toBe(
      '/api/v1/namespaces/a/pods/p',
    );
    expect(actionObject(patch('/api/v1/nodes/n1'))).not.toBe(actionObject(patch('/api/v1/nodes/n2')));
  });
});
