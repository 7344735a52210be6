import { describe, expect, it } from 'vitest';
import { type FaultTargets, injectFault, LabFaults } from './faults.js';

function targets() {
  const calls: string[] = [];
  const t: FaultTargets = {
    faults: new LabFaults(),
    crashNode: async (n) => {
      calls.push(`crash ${n}`);
    },
    recoverNode: async (n) => {
      calls.push(`recover ${n}`);
    },
    setApiDown: (n, down) => {
      calls.push(`api ${n} ${down ? 'down' : 'up'}`);
    },
  };
  return { t, calls };
}

describe('LabFaults', () => {
  it('turns fault states into per-node behaviour', () => {
    const f = new LabFaults();
    expect(f.behaviour('w1')).toEqual({ kubeletStopped: false, neverReady: false, slowDrain: undefined });
    f.add({ kind: 'node-never-ready', node: 'w1' });
    f.add({ kind: 'slow-drain', node: 'w1', graceSeconds: 7 });
    f.add({ kind: 'slow-drain', node: 'w2' });
    expect(f.behaviour('w1')).toEqual({
      kubeletStopped: false,
      neverReady: true,
      slowDrain: { graceSeconds: 7 },
    });
    expect(f.behaviour('w2').slowDrain).toEqual({});
    f.stopKubelet('w3');
    expect(f.behaviour('w3').kubeletStopped).toBe(true);
    f.startKubelet('w3');
    expect(f.behaviour('w3').kubeletStopped).toBe(false);
    f.remove({ kind: 'node-never-ready', node: 'w1' });
    expect(f.behaviour('w1').neverReady).toBe(false);
  });

  it('refuses evictions by namespace and pod name prefix', () => {
    const f = new LabFaults();
    expect(f.evictionRefusal({ namespace: 'shop', name: 'api-1' })).toBeUndefined();
    f.add({ kind: 'eviction-refused', namespace: 'shop', podNamePrefix: 'api-', message: 'no' });
    expect(f.evictionRefusal({ namespace: 'shop', name: 'api-1' })).toBe('no');
    expect(f.evictionRefusal({ namespace: 'shop', name: 'web-1' })).toBeUndefined();
    expect(f.evictionRefusal({ namespace: 'apps', name: 'api-1' })).toBeUndefined();
  });
});

describe('injectFault', () => {
  it('crashes and recovers a node, and clears only once', async () => {
    const { t, calls } = targets();
    const h = await injectFault(t, { kind: 'process-crash', node: 'cp-2' });
    expect(h.description).toBe('processes of cp-2 crashed');
    expect(t.faults.behaviour('cp-2').kubeletStopped).toBe(true);
    await h.clear();
    await h.clear();
    expect(calls).toEqual(['crash cp-2', 'recover cp-2']);
    expect(t.faults.behaviour('cp-2').kubeletStopped).toBe(false);
  });

  it('takes an API instance down and back; state faults only change state', async () => {
    const { t, calls } = targets();
    const down = await injectFault(t, { kind: 'api-down', node: 'cp-1' });
    const stalled = await injectFault(t, { kind: 'member-never-catches-up', node: 'talos-1' });
    expect(t.faults.has('member-never-catches-up', 'talos-1')).toBe(true);
    await down.clear();
    await stalled.clear();
    expect(calls).toEqual(['api cp-1 down', 'api cp-1 up']);
    expect(t.faults.active()).toEqual([]);
  });
});
