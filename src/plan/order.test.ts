import { describe, expect, it } from 'vitest';
import type { ControlPlaneNodeFact } from '../facts/model.js';
import { orderControlPlanes } from './order.js';

function cp(name: string): ControlPlaneNodeFact {
  return {
    name,
    internalIP: null,
    addresses: [],
    labels: {},
    taints: [],
    unschedulable: false,
    kubeletVersion: null,
    podCIDRs: [],
    providerID: null,
    tainted: false,
    advertiseAddress: null,
    apiserverPort: null,
    hasApiserver: true,
    etcdMember: null,
    hasNodeObject: true,
  };
}

const names = (ns: { name: string }[]) => ns.map((n) => n.name);

describe('orderControlPlanes', () => {
  const five = ['cp-10', 'cp-2', 'cp-1', 'cp-4', 'cp-3'].map(cp);

  it('followers in natural name order, the leader last in phase 2, the last follower in phase 4', () => {
    const o = orderControlPlanes(five, 'cp-2', null);
    expect(names(o.phase2)).toEqual(['cp-1', 'cp-3', 'cp-4', 'cp-2']);
    expect(o.last.name).toBe('cp-10');
  });

  it('the endpoint node goes last even when it leads', () => {
    const o = orderControlPlanes(five, 'cp-3', 'cp-3');
    expect(o.last.name).toBe('cp-3');
    expect(names(o.phase2)).toEqual(['cp-1', 'cp-2', 'cp-4', 'cp-10']);
  });

  it('a single control plane is phase 4 alone', () => {
    const o = orderControlPlanes([cp('only')], 'only', null);
    expect(o.phase2).toEqual([]);
    expect(o.last.name).toBe('only');
  });
});
