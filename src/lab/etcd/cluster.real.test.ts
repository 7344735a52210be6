import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { scaled } from '../../util/testing-slowness.js';
import { type EtcdMinor, missingReason } from './binaries.js';
import { disposeAllLabs, EtcdLabCluster, type MemberStatus, reapStaleLabs, withEtcdLab } from './cluster.js';
import { isAlive } from './process.js';

// Real etcd processes. Subnets (127.0.<subnet>.x) 10–19 belong to this file; other test files that
// start lab clusters must pick their own so that files running in parallel never collide.
// The tests run concurrently, each on its own subnet: most of their time is etcd's own waiting
// (5 s of full connectivity before it accepts a membership change).

// A private root for the tests that look at the root directory itself.
let labRoot: string;
beforeAll(async () => {
  labRoot = await mkdtemp(join(tmpdir(), 'ferry-lab-test-'));
});
afterAll(async () => {
  await disposeAllLabs();
  await rm(labRoot, { recursive: true, force: true });
});

const missing: Record<EtcdMinor, string | undefined> = {
  '3.4': await missingReason('3.4'),
  '3.5': await missingReason('3.5'),
};

type OkStatus = Extract<MemberStatus, { ok: true }>;

async function okStatuses(lab: EtcdLabCluster): Promise<OkStatus[]> {
  const all = await lab.status();
  for (const s of all) if (!s.ok) throw new Error(`${s.name}: ${s.error}`);
  return all as OkStatus[];
}

async function eventually<T>(fn: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + scaled(timeoutMs);
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** GET /version trusting the etcd CA but presenting no client certificate. */
function versionWithoutClientCert(url: string, ca: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/version`, { ca, agent: false, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

function gone(pid: number): boolean {
  return !existsSync(`/proc/${pid}`);
}

const cases: { minor: EtcdMinor; subnet: number }[] = [
  { minor: '3.4', subnet: 10 },
  { minor: '3.5', subnet: 13 },
];

for (const { minor, subnet } of cases) {
  it.concurrent(`etcd ${minor}: starts 3 TLS members that answer over mTLS; leader moves, members crash and come back; dispose leaves nothing`, async ({
    expect,
    skip,
  }) => {
    if (missing[minor]) skip(missing[minor]);
    const lab = await EtcdLabCluster.start({ subnet, version: minor, members: 3 });
    try {
      // Member list over mTLS, IDs as decimal strings matching what each member says of itself.
      const list = await lab.memberList();
      expect(list.map((m) => m.name).sort()).toEqual(['m1', 'm2', 'm3']);
      expect(list.every((m) => !m.isLearner)).toBe(true);
      for (const m of lab.members()) {
        expect(m.id).toMatch(/^[1-9]\d*$/);
        const listed = list.find((x) => x.ID === m.id);
        expect(listed?.peerURLs).toEqual([`https://127.0.${subnet}.${m.name.slice(1)}:2380`]);
        expect(listed?.clientURLs).toEqual([m.clientUrl]);
        const v = await lab.version(m.name);
        expect(v.etcdserver.startsWith(`${minor}.`)).toBe(true);
        expect(v.etcdcluster).toBe(`${minor}.0`);
      }

      // kubeadm-style client-cert auth: the same CA without a client certificate is turned away.
      const ca = await readFile(lab.clientTls().caFile);
      await expect(versionWithoutClientCert(lab.members()[0]!.clientUrl, ca)).rejects.toThrow();

      // Leader discovery: every member names the same leader, which is one of them.
      const statuses = await okStatuses(lab);
      expect(new Set(statuses.map((s) => s.leaderId)).size).toBe(1);
      const leader = await lab.waitForLeader();
      expect(lab.member(leader).id).toBe(statuses[0]!.leaderId);

      // Move leadership to a follower.
      const follower = lab.members().find((m) => m.name !== leader)!.name;
      await lab.moveLeader(follower);
      expect(await lab.leader()).toBe(follower);

      const client = lab.client();
      try {
        await client.put('ferry/k').value('v1');
      } finally {
        client.close();
      }

      // Crash the leader: the others elect a new one and keep taking writes.
      const crashedPid = lab.member(follower).pid!;
      await lab.crash(follower);
      expect(lab.member(follower).state).toBe('crashed');
      expect(gone(crashedPid)).toBe(true);
      const newLeader = await lab.waitForLeader();
      expect(newLeader).not.toBe(follower);
      const c2 = lab.client();
      try {
        await eventually(async () => {
          await c2.put('ferry/k').value('v2');
        });
      } finally {
        c2.close();
      }

      // Restart on its data dir: it catches up with the write it missed.
      await lab.restart(follower);
      expect(lab.member(follower).state).toBe('running');
      const c3 = lab.client([follower]);
      try {
        expect(await eventually(() => c3.get('ferry/k').string())).toBe('v2');
      } finally {
        c3.close();
      }

      // Graceful stop and restart of another member.
      const other = lab.members().find((m) => m.name !== follower)!.name;
      await lab.stop(other);
      expect(lab.member(other)).toMatchObject({ state: 'stopped', pid: undefined });
      await lab.restart(other);
      await eventually(async () => expect((await okStatuses(lab)).length).toBe(3));
    } finally {
      await lab.dispose();
    }
    const pids = lab.spawnedPids();
    expect(pids.length).toBe(5);
    expect(pids.filter((p) => !gone(p))).toEqual([]);
    expect(existsSync(lab.dir)).toBe(false);
  });

  it.concurrent(`etcd ${minor}: adds a learner, starts it, promotes it, hands it leadership and removes an old member`, async ({
    expect,
    skip,
  }) => {
    if (missing[minor]) skip(missing[minor]);
    await withEtcdLab({ subnet: subnet + 1, version: minor, members: 3 }, async (lab) => {
      const c = lab.client();
      try {
        await c.put('ferry/before').value('kept');
      } finally {
        c.close();
      }

      const added = await lab.addMember({ name: 'n4', version: minor, learner: true });
      expect(added).toMatchObject({ state: 'unstarted', isLearner: true, ip: `127.0.${subnet + 1}.4` });
      let entry = (await lab.memberList()).find((m) => m.ID === added.id);
      // Not started yet: etcd lists it without a name.
      expect(entry).toMatchObject({ name: '', isLearner: true, peerURLs: [added.peerUrl] });

      await lab.startMember('n4');
      entry = (await lab.memberList()).find((m) => m.ID === added.id);
      expect(entry).toMatchObject({ name: 'n4', isLearner: true });
      const learnerStatus = (await okStatuses(lab)).find((s) => s.name === 'n4');
      expect(learnerStatus?.isLearner).toBe(true);

      await lab.promote('n4');
      const voters = (await lab.memberList()).filter((m) => !m.isLearner);
      expect(voters.map((m) => m.name).sort()).toEqual(['m1', 'm2', 'm3', 'n4']);

      await lab.moveLeader('n4');
      expect(await lab.leader()).toBe('n4');

      const m1Pid = lab.member('m1').pid!;
      await lab.removeMember('m1');
      expect((await lab.memberList()).map((m) => m.name).sort()).toEqual(['m2', 'm3', 'n4']);
      expect(lab.member('m1')).toMatchObject({ state: 'removed', pid: undefined });
      expect(gone(m1Pid)).toBe(true);
      await expect(lab.restart('m1')).rejects.toThrow(FerryError);

      const c4 = lab.client(['n4']);
      try {
        expect(await c4.get('ferry/before').string()).toBe('kept');
      } finally {
        c4.close();
      }

      // A voter added directly and started with --initial-cluster-state existing.
      await lab.addMember({ name: 'n5', version: minor, learner: false });
      await lab.startMember('n5');
      const after = await lab.memberList();
      expect(
        after
          .filter((m) => !m.isLearner)
          .map((m) => m.name)
          .sort(),
      ).toEqual(['m2', 'm3', 'n4', 'n5']);
    });
  });
}

it.concurrent('a 3.4 member refused by a 3.5 cluster fails fast; its unstarted voter entry is removed by ID', async ({
  expect,
  skip,
}) => {
  const reason = missing['3.4'] ?? missing['3.5'];
  if (reason) skip(reason);
  await withEtcdLab({ subnet: 17, version: '3.5', members: 3 }, async (lab) => {
    const old = await lab.addMember({ name: 'kubeadm-old', version: '3.4', learner: false });
    const err = await lab.startMember('kubeadm-old').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).message).toContain('kubeadm-old (127.0.17.4) exited during start');
    // etcd 3.4 says either, depending on whether it saw the cluster version before discovery failed.
    expect((err as FerryError).remediation).toMatch(
      /cluster version|incompatible with current running cluster/,
    );
    expect(lab.member('kubeadm-old').state).toBe('exited');
    // `member add` had succeeded: the cluster now counts an unstarted voter (4 voters, quorum 3).
    expect((await lab.memberList()).find((m) => m.ID === old.id)).toMatchObject({
      name: '',
      isLearner: false,
    });
    await lab.removeMember('kubeadm-old');
    expect((await lab.memberList()).map((m) => m.name).sort()).toEqual(['m1', 'm2', 'm3']);
  });
});

it.concurrent('a 3.5 learner joins a 3.4 cluster, which stays at cluster version 3.4.0', async ({
  expect,
  skip,
}) => {
  const reason = missing['3.4'] ?? missing['3.5'];
  if (reason) skip(reason);
  await withEtcdLab({ subnet: 16, version: '3.4', members: 3 }, async (lab) => {
    await lab.addMember({ name: 'talos-1', version: '3.5', learner: true });
    await lab.startMember('talos-1');
    expect(await lab.version('talos-1')).toEqual({
      etcdserver: expect.stringMatching(/^3\.5\./),
      etcdcluster: '3.4.0',
    });
    await lab.promote('talos-1');
    const byName = new Map((await okStatuses(lab)).map((s) => [s.name, s]));
    expect(byName.get('talos-1')?.version).toMatch(/^3\.5\./);
    expect(byName.get('m1')?.version).toMatch(/^3\.4\./);
    expect((await lab.version('m1')).etcdcluster).toBe('3.4.0');
    expect((await lab.version('talos-1')).etcdcluster).toBe('3.4.0');
  });
});

it.concurrent('a member that cannot start fails the start at once, with its log, and leaves nothing running', async ({
  expect,
  skip,
}) => {
  if (missing['3.4']) skip(missing['3.4']);
  const root = join(labRoot, 'fail');
  // Something else holds m1's client port.
  const squatter = createServer();
  await new Promise<void>((r) => squatter.listen(2379, '127.0.19.1', r));
  try {
    const t0 = Date.now();
    const err = await EtcdLabCluster.start({ subnet: 19, version: '3.4', members: 1, root }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).message).toMatch(/m1 \(127\.0\.19\.1\) exited during start/);
    expect((err as FerryError).remediation).toMatch(/address already in use/);
    expect(Date.now() - t0).toBeLessThan(scaled(15_000));
    expect(await readdir(root)).toEqual([]);
  } finally {
    squatter.close();
  }
});

it.concurrent('reapStaleLabs kills the etcd of a run that was SIGKILLed and removes its directory', async ({
  expect,
  skip,
}) => {
  if (missing['3.4']) skip(missing['3.4']);
  const root = join(labRoot, 'reap');
  const dataRoot = join(labRoot, 'reap-data');
  await mkdir(root);
  const script = join(labRoot, 'owner.mts');
  const clusterTs = fileURLToPath(new URL('./cluster.ts', import.meta.url));
  await writeFile(
    script,
    [
      `import { EtcdLabCluster } from ${JSON.stringify(clusterTs)};`,
      `const lab = await EtcdLabCluster.start({ subnet: 18, version: '3.4', members: 1, root: ${JSON.stringify(root)}, dataRoot: ${JSON.stringify(dataRoot)} });`,
      'process.stdout.write(JSON.stringify({ pids: lab.spawnedPids(), dir: lab.dir, dataDir: lab.dataDir }) + "\\n");',
      'setInterval(() => {}, 1000);',
    ].join('\n'),
  );
  const owner = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  owner.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  try {
    const line = await eventually(async () => {
      if (!out.includes('\n')) throw new Error('owner not ready');
      return JSON.parse(out) as { pids: number[]; dir: string; dataDir: string };
    }, 30_000);
    expect(line.pids).toHaveLength(1);
    const etcdPid = line.pids[0]!;
    owner.kill('SIGKILL'); // no exit handler runs: the etcd stays behind
    await once(owner, 'exit');
    expect(isAlive(etcdPid)).toBe(true);

    expect(line.dataDir.startsWith(dataRoot)).toBe(true);
    const res = await reapStaleLabs(root, dataRoot);
    expect(res.killed).toEqual([etcdPid]);
    expect(res.removedDirs).toEqual([line.dir, line.dataDir]);
    expect(isAlive(etcdPid)).toBe(false);
    expect(existsSync(line.dir)).toBe(false);
    expect(existsSync(line.dataDir)).toBe(false);
  } finally {
    owner.kill('SIGKILL');
    await reapStaleLabs(root, dataRoot);
  }
});
