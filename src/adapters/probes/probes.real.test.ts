import { type AddressInfo, createServer } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { startLabApi } from '../../lab/apiserver/testing.js';
import { missingReason } from '../../lab/etcd/binaries.js';
import { disposeAllLabs, withEtcdLab } from '../../lab/etcd/cluster.js';
import { skipFor } from '../../lab/testing-binaries.js';
import type { ProbeSample } from '../../ports/run.js';
import { scaled } from '../../util/testing-slowness.js';
import { until } from '../../util/testing-until.js';
import { EtcdAdmin, readTls } from '../etcd/admin.js';
import type { LoadedKubeconfig } from '../kube/kubeconfig.js';
import { createRequester } from '../kube/request.js';
import { readyzProbe, writeReadProbe } from './api.js';
import { ETCD_PROBE_PREFIX, EtcdWriteProbe } from './etcd.js';
import { downsample, longestGaps, summarize } from './window.js';

// Real etcd on 127.0.42–43.x (this file's subnets).
afterAll(async () => {
  await disposeAllLabs();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('summarize', () => {
  const s = (t: number, ok: boolean, latencyMs = 5, error?: string): ProbeSample => ({
    t,
    ok,
    latencyMs,
    ...(error && { error }),
  });

  it('measures the longest consecutive failure window and the longest gap between acknowledgements', () => {
    const samples = [
      s(0, true),
      s(10, false, 300, 'deadline 127.0.0.1:2379'),
      s(310, false, 300, 'deadline 127.0.0.2:2379'),
      s(610, true), // window 10 → 615 = 605; gap 5 → 615 = 610
      s(620, false, 10, 'x'),
      s(630, true), // window 620 → 635 = 15
      s(700, true), // gap 635 → 705 = 70
    ];
    const r = summarize('p', 'd', samples);
    expect(r).toMatchObject({
      attempts: 7,
      failures: 3,
      longestFailureWindowMs: 605,
      longestGapMs: 610,
      longestGapAtMs: 5,
    });
    // Addresses are folded so one kind of error is counted once.
    expect(r.errors).toEqual([
      { message: 'deadline ADDR', count: 2 },
      { message: 'x', count: 1 },
    ]);
  });

  it('counts a window still open at the end, and nothing on a clean series', () => {
    expect(summarize('p', 'd', [s(0, true), s(10, false, 20)]).longestFailureWindowMs).toBe(20);
    expect(summarize('p', 'd', [s(0, true), s(10, true)])).toMatchObject({
      failures: 0,
      longestFailureWindowMs: 0,
      longestGapMs: 10,
    });
  });

  it('lists the longest gaps, longest first, with the failures inside each', () => {
    const samples = [
      s(0, true), // ack 5
      s(5, false, 300, 'deadline 127.0.0.1:2379'),
      s(305, true), // ack 310: gap 305, one failure
      s(310, true), // ack 315: gap 5
      s(315, true, 40), // ack 355: gap 40
    ];
    expect(longestGaps(samples, 2)).toEqual([
      { fromMs: 5, gapMs: 305, failures: 1, errors: ['deadline ADDR'] },
      { fromMs: 315, gapMs: 40, failures: 0, errors: [] },
    ]);
    expect(longestGaps(samples, 1)[0]!.gapMs).toBe(summarize('p', 'd', samples).longestGapMs);
    expect(longestGaps([s(0, false)], 3)).toEqual([]);
  });

  it('downsamples for a plot but keeps every failure and the biggest gap', () => {
    const many: ProbeSample[] = Array.from({ length: 5000 }, (_, i) => s(i * 2, i !== 2500));
    many[4000] = s(8000, true, 900);
    const d = downsample(many, 300);
    expect(d.length).toBeLessThanOrEqual(300);
    expect(d.some((x) => !x.ok)).toBe(true);
    expect(summarize('p', 'd', d).longestGapMs).toBe(summarize('p', 'd', many).longestGapMs);
  });
});

describe('API probes through a lab API server', () => {
  it('count every failure while the instance is down and the outage as one window', async () => {
    const lab = await startLabApi();
    const kc = new KubeConfig();
    kc.loadFromString(lab.kubeconfig);
    const loaded: LoadedKubeconfig = {
      kc,
      file: 'mem',
      context: kc.getCurrentContext(),
      server: lab.server.url,
    };
    const requester = createRequester(loaded, { keepAlive: false });
    const ready = readyzProbe({ requester, intervalMs: 20, timeoutMs: scaled(1_000) });
    const write = writeReadProbe({
      requester,
      intervalMs: 20,
      timeoutMs: scaled(1_000),
      runId: 'ABCDEF123456',
    });
    try {
      ready.start();
      write.start();
      await sleep(scaled(400));
      lab.server.setDown(true);
      await sleep(scaled(400));
      lab.server.setDown(false);
      await sleep(scaled(400));
      const [r, w] = [await ready.stop(), await write.stop()];
      for (const x of [r, w]) {
        expect(x.failures).toBeGreaterThan(2);
        expect(x.attempts - x.failures).toBeGreaterThan(4);
        expect(x.longestFailureWindowMs).toBeGreaterThan(scaled(300));
        expect(x.longestFailureWindowMs).toBeLessThan(scaled(1_500));
      }
      expect(w.extra?.['writes']).toBe(w.attempts);
      // The probe's ConfigMap is cleaned up.
      await expect(
        requester.request('GET', '/api/v1/namespaces/default/configmaps/ferry-probe-abcdef12'),
      ).rejects.toMatchObject({
        status: 404,
      });
    } finally {
      await lab.stop();
    }
  });
});

describe('etcd write probe on a real cluster', () => {
  it('moves to other members only once the write in flight to the member left out has answered', async ({
    skip,
  }) => {
    const missing = await missingReason('3.4');
    if (skipFor(missing)) skip(missing);
    await withEtcdLab({ subnet: 43, version: '3.4', members: 3 }, async (lab) => {
      const tls = readTls(lab.clientTls());
      // Freeze a follower: the two others keep quorum and their leader, so writes to them go on.
      const leader = await lab.waitForLeader();
      const a = lab.members().find((m) => m.name !== leader)!;
      const [b, c] = lab.members().filter((m) => m.name !== a.name);
      const probe = new EtcdWriteProbe({
        endpoints: [a.clientUrl],
        tls,
        runId: 'steer',
        timeoutMs: scaled(600),
      });
      probe.start();
      await sleep(scaled(200));
      // Frozen: the write now on its way to `a` hangs until its (scaled) 600 ms deadline.
      process.kill(a.pid!, 'SIGSTOP');
      try {
        await sleep(scaled(50));
        const t0 = performance.now();
        await probe.setEndpoints([b!.clientUrl, c!.clientUrl]);
        const waited = performance.now() - t0;
        const before = probe.samples().length;
        expect(waited).toBeGreaterThan(scaled(400));
        expect(probe.samples().at(-1)?.ok).toBe(false);
        await sleep(scaled(500));
        const after = probe.samples().slice(before);
        // Every write after the switch went to `b` (connected already) and was acknowledged.
        expect(after.length).toBeGreaterThan(3);
        expect(after.every((x) => x.ok)).toBe(true);
      } finally {
        process.kill(a.pid!, 'SIGCONT');
      }
      const summary = await probe.stop();
      expect(summary.extra).toMatchObject({ lost: 0, checked: 'yes' });
    });
  }, 120_000);

  it('stays on the leader through leadership moves: refused at once, never left hanging', async ({
    skip,
  }) => {
    const missing = await missingReason('3.4');
    if (skipFor(missing)) skip(missing);
    // Listed second: a member that accepts connections and never answers. A probe that left the
    // leader when it refused a write would hang there.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const silentUrl = `https://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      await withEtcdLab({ subnet: 62, version: '3.4', members: 3 }, async (lab) => {
        const tls = readTls(lab.clientTls());
        const probe = new EtcdWriteProbe({
          endpoints: lab.endpoints(),
          tls,
          runId: 'lead',
          intervalMs: 0,
          timeoutMs: scaled(300),
        });
        probe.start();
        // Move until the leader has refused three writes at once, the case under test (about one
        // move in three catches a write in the handover, on tmpfs).
        const refused = () => probe.samples().filter((x) => !x.ok && x.latencyMs < scaled(150)).length;
        for (let i = 0; i < 40 && refused() < 3; i++) {
          const from = lab.member(await lab.waitForLeader());
          await probe.setEndpoints([from.clientUrl, silentUrl]);
          await sleep(scaled(100));
          await lab.moveLeader(lab.members().find((m) => m.name !== from.name)!.name);
          await sleep(scaled(100));
        }
        await probe.setEndpoints(lab.endpoints());
        const summary = await probe.stop();
        const failed = probe.samples().filter((x) => !x.ok);
        expect(failed.filter((x) => x.latencyMs >= scaled(150))).toEqual([]);
        expect(failed.length).toBeGreaterThanOrEqual(3);
        expect(summary.extra).toMatchObject({ lost: 0, checked: 'yes' });
      });
    } finally {
      silent.close();
    }
  }, 120_000);

  it('checks and deletes acknowledged writes as it goes, and counts one that went missing', async ({
    skip,
  }) => {
    const missing = await missingReason('3.4');
    if (skipFor(missing)) skip(missing);
    await withEtcdLab({ subnet: 63, version: '3.4', members: 1 }, async (lab) => {
      const tls = readTls(lab.clientTls());
      const etcd = lab.client();
      const prefix = `${ETCD_PROBE_PREFIX}rolling/`;
      try {
        const probe = new EtcdWriteProbe({
          endpoints: lab.endpoints(),
          tls,
          runId: 'rolling',
          verifyEvery: 20,
        });
        probe.start();
        // An acknowledged write vanishes behind the probe's back before its first check (after
        // 20 writes, 10 ms apart).
        await until('the first write acknowledged', async () => probe.samples()[0]?.ok, { intervalMs: 1 });
        await etcd.delete().key(`${prefix}000000001`).exec();
        await sleep(scaled(1_000));
        const acked = probe.samples().filter((x) => x.ok).length;
        const live = (await etcd.getAll().prefix(prefix).keys()).length;
        // Checked writes are gone; only those since the last check remain.
        expect(live).toBeLessThan(acked / 2);
        const summary = await probe.stop();
        expect(summary.extra).toMatchObject({ lost: 1, checked: 'yes' });
        expect(await etcd.getAll().prefix(prefix).keys()).toEqual([]);
      } finally {
        etcd.close();
      }
    });
  }, 120_000);

  it('sees a ~1 s gap when the leader is removed directly, and a short one when leadership moves first', async ({
    skip,
  }) => {
    const missing = await missingReason('3.4');
    if (skipFor(missing)) skip(missing);
    await withEtcdLab({ subnet: 42, version: '3.4', members: 3 }, async (lab) => {
      const tls = readTls(lab.clientTls());
      const admin = new EtcdAdmin({ endpoints: lab.endpoints(), tls });
      try {
        // 1. Move leadership to a follower, then remove the old leader: writes barely notice.
        const leader1 = await lab.waitForLeader();
        const stays = lab.members().filter((m) => m.name !== leader1);
        const probe1 = new EtcdWriteProbe({ endpoints: stays.map((m) => m.clientUrl), tls, runId: 'run-a' });
        probe1.start();
        await sleep(scaled(300));
        await admin.moveLeader(stays[0]!.id!);
        await admin.removeMember(lab.member(leader1).id!);
        await sleep(scaled(300));
        const good = await probe1.stop();
        expect(good.extra).toMatchObject({ lost: 0, checked: 'yes' });
        expect(Number(good.extra?.['acknowledged'])).toBeGreaterThan(20);

        // 2. Remove the (new) leader directly: an election, ~1–2 s without writes.
        const leader2 = await lab.waitForLeader();
        const rest = lab.members().filter((m) => m.name !== leader2 && m.state === 'running');
        const probe2 = new EtcdWriteProbe({ endpoints: rest.map((m) => m.clientUrl), tls, runId: 'run-b' });
        probe2.start();
        await sleep(scaled(300));
        await admin.removeMember(lab.member(leader2).id!);
        await sleep(scaled(2_500));
        const bad = await probe2.stop();
        expect(bad.extra).toMatchObject({ lost: 0 });
        // An election takes an election timeout (1 s) and more; a transfer a few ms (plus this
        // machine's noise: the probe shares its event loop with the test).
        expect(bad.longestGapMs).toBeGreaterThan(900);
        expect(good.longestGapMs).toBeLessThan(bad.longestGapMs / 2);
      } finally {
        admin.close();
      }
    });
  }, 120_000);
});
