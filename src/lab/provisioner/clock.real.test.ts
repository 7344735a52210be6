/**
 * The lab on a clock (clock.ts): a provisioned machine is returned booting, its Node or etcd
 * member joins only after its boot time, and a decommissioned one keeps answering for its
 * power-off time. Subnet 127.0.171.x belongs to this file.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../snapshot/load.js';
import { scaled } from '../../util/testing-slowness.js';
import { until } from '../../util/testing-until.js';
import type { KObj } from '../apiserver/object.js';
import { LabCluster } from '../cluster.js';
import { missingReason } from '../etcd/binaries.js';
import { isNodeReady } from '../nodes/world.js';
import { skipFor } from '../testing-binaries.js';
import { disposeLab } from '../testing-dispose.js';

const SUBNET = 171;
const missing = (await missingReason('3.4')) ?? (await missingReason('3.5'));

let lab: LabCluster;
let dir: string;
const lines: string[] = [];

const nodeOf = (name: string) =>
  lab.client.get<KObj>(`/api/v1/nodes/${name}`).catch((err: { status?: number }) => {
    if (err.status === 404) return undefined;
    throw err;
  });

describe.skipIf(skipFor(missing))('the lab clock', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-lab-clock-'));
    const snapshot = await loadSnapshot('examples/lab-cluster', { strictPki: false });
    lab = await LabCluster.fromSnapshot(snapshot, {
      dir,
      subnet: SUBNET,
      canary: false,
      clock: { bootSeconds: 2, decommissionSeconds: 1, jitter: 0 },
      log: (l) => lines.push(l),
    });
  }, 90_000);

  afterAll(() => disposeLab(lab, dir));

  it('records its clock', () => {
    expect(lab.info().clock).toEqual({ bootSeconds: 2, decommissionSeconds: 1, jitter: 0 });
  });

  it('returns a worker booting; its Node registers after its boot time and gets Ready', async () => {
    const t0 = Date.now();
    const rec = await lab.provisioner.provisionWorker({ name: 'talos-w-1', address: '10.20.0.41' });
    // Returned at once, before the boot: a batch's machines boot side by side.
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(rec.state).toBe('booting');
    while (Date.now() - t0 < 1_000) {
      expect(await nodeOf('talos-w-1')).toBeUndefined();
      await sleep(100);
    }
    await until(
      'talos-w-1 Ready',
      async () => {
        const n = await nodeOf('talos-w-1');
        return n !== undefined && isNodeReady(n);
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const readyMs = Date.now() - t0;
    expect(readyMs).toBeGreaterThanOrEqual(2_000);
    expect(readyMs).toBeLessThan(scaled(5_000));
    expect(lab.provisioner.node('talos-w-1')?.state).toBe('joined');
    expect(lines).toContain(
      `talos worker talos-w-1 (10.20.0.41 → ${rec.labAddress}): booting for 2.0 s (lab clock)`,
    );
  });

  it("adds a control plane's etcd member only after its boot time", async () => {
    const t0 = Date.now();
    const rec = await lab.provisioner.provisionControlPlane(
      { name: 'talos-cp-1', address: '10.20.0.31' },
      { wait: false },
    );
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(rec.state).toBe('booting');
    const peer = `https://${rec.labAddress}:2380`;
    while (Date.now() - t0 < 1_000) {
      expect((await lab.etcd.memberList()).some((m) => m.peerURLs.includes(peer))).toBe(false);
      await sleep(200);
    }
    await lab.provisioner.waitJoined('talos-cp-1', scaled(60_000));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2_000);
    expect((await lab.etcd.memberList()).find((m) => m.peerURLs.includes(peer))).toMatchObject({
      name: 'talos-cp-1',
      isLearner: false,
    });
  });

  it("a slow-boot fault's seconds replace the clock's for its node", async () => {
    const fault = await lab.inject({ kind: 'slow-boot', node: 'talos-w-2', seconds: 0.5 });
    const rec = await lab.provisioner.provisionWorker({ name: 'talos-w-2', address: '10.20.0.42' });
    expect(lines).toContain(
      `talos worker talos-w-2 (10.20.0.42 → ${rec.labAddress}): booting for 0.5 s (slow-boot fault)`,
    );
    await lab.provisioner.waitJoined('talos-w-2', scaled(10_000));
    await fault.clear();
  });

  it('powers a machine off after its decommission time; it answers until then', async () => {
    const t0 = Date.now();
    const off = lab.provisioner.decommission('talos-w-1');
    const again = lab.provisioner.decommission('talos-w-1');
    await sleep(500);
    expect(lab.faults.kubeletStopped('talos-w-1')).toBe(false);
    expect(lab.provisioner.node('talos-w-1')?.state).toBe('joined');
    await Promise.all([off, again]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_000);
    expect(lab.faults.kubeletStopped('talos-w-1')).toBe(true);
    expect(lab.provisioner.node('talos-w-1')?.state).toBe('decommissioned');
  });
});
