import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { missingReason } from '../../lab/etcd/binaries.js';
import { disposeAllLabs, withEtcdLab } from '../../lab/etcd/cluster.js';
import { EtcdAdmin } from './admin.js';

// Real etcd on loopback; subnets 127.0.40–41.x belong to this file.
afterAll(async () => {
  await disposeAllLabs();
});

const missing34 = await missingReason('3.4');
const missing35 = await missingReason('3.5');

it('observes, promotes, moves leadership and removes members of a real 3.4 cluster joined by a 3.5 learner', async ({
  skip,
}) => {
  if (missing34) skip(missing34);
  const learnerVersion = missing35 ? '3.4' : '3.5';
  await withEtcdLab({ subnet: 40, version: '3.4', members: 3 }, async (lab) => {
    const log: string[] = [];
    const admin = new EtcdAdmin({
      endpoints: lab.endpoints().slice(0, 1),
      tls: lab.clientTls(),
      log: (l) => log.push(l),
    });
    try {
      // First look: the member list replaces the single endpoint given; ids exact strings.
      let view = await admin.observe();
      expect(view.members.map((m) => m.id).sort()).toEqual(
        lab
          .members()
          .map((m) => m.id!)
          .sort(),
      );
      expect(view.members.every((m) => /^[1-9]\d*$/.test(m.id) && !m.isLearner)).toBe(true);
      expect(admin.endpoints().sort()).toEqual(lab.endpoints().sort());
      expect(view.healthy.sort()).toEqual(view.members.map((m) => m.id).sort());
      const leaderName = await lab.waitForLeader();
      expect(view.leaderId).toBe(lab.member(leaderName).id);

      // A learner joins from its own side (as Talos does); ferry promotes it, retrying until in sync.
      const added = await lab.addMember({ name: 'talos-1', version: learnerVersion, learner: true });
      await lab.startMember('talos-1');
      view = await admin.observe();
      expect(view.members.find((m) => m.id === added.id)).toMatchObject({ name: 'talos-1', isLearner: true });
      expect(view.healthy).toContain(added.id); // a learner's health is its status
      // Leadership never goes to a learner.
      await expect(admin.moveLeader(added.id!)).rejects.toThrow(/it is a learner/);
      const gen = admin.generation;
      await admin.promote(added.id!);
      expect(admin.generation).toBeGreaterThan(gen); // new clients after the change
      view = await admin.observe();
      expect(view.members.filter((m) => !m.isLearner)).toHaveLength(4);

      // MoveLeader is sent to the current leader; afterwards the target leads.
      await admin.moveLeader(added.id!);
      expect(await admin.leaderId()).toBe(added.id);
      expect(await lab.leader()).toBe('talos-1');
      expect(log.some((l) => l.includes(`MoveLeader ${lab.member(leaderName).id} → ${added.id}`))).toBe(true);

      // Remove the old leader (now a follower) through another member, right after the promotion:
      // etcd answers `unhealthy cluster` for ~5 s and the adapter waits it out.
      const old = lab.member(leaderName);
      const oldPid = old.pid!;
      expect(await admin.removeMember(old.id!)).toBe('removed');
      expect(
        log.some((l) => l.includes(`MemberRemove ${old.id}`) && !l.includes(`via ${old.clientUrl}`)),
      ).toBe(true);
      expect(admin.endpoints()).not.toContain(old.clientUrl);
      view = await admin.observe();
      expect(view.members.map((m) => m.id)).not.toContain(old.id);
      expect(view.members).toHaveLength(3);
      // The removed member stops by itself.
      for (let i = 0; i < 100 && existsSync(`/proc/${oldPid}`); i++)
        await new Promise((r) => setTimeout(r, 100));
      // Idempotent: a resumed run asking again learns it is gone already, without a second call.
      const calls = log.length;
      expect(await admin.removeMember(old.id!)).toBe('already-absent');
      expect(log.length).toBe(calls);
      await expect(admin.moveLeader('12345')).rejects.toBeInstanceOf(FerryError);
    } finally {
      admin.close();
    }
  });
}, 120_000);

it('keeps observing with one member down and names it unhealthy', async ({ skip }) => {
  if (missing34) skip(missing34);
  await withEtcdLab({ subnet: 41, version: '3.4', members: 3 }, async (lab) => {
    const admin = new EtcdAdmin({ endpoints: lab.endpoints(), tls: lab.clientTls(), callTimeoutMs: 1_000 });
    try {
      await lab.crash('m3');
      const m3 = lab.member('m3').id!;
      // If m3 led, the others need an election (~1–2 s) before linearizable reads work again.
      let view = await admin.observe();
      for (let i = 0; i < 50 && view.healthy.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 200));
        view = await admin.observe();
      }
      expect(view.members.map((m) => m.id)).toContain(m3);
      expect(view.healthy).not.toContain(m3);
      expect(view.healthy).toHaveLength(2);
      expect(view.statuses.find((s) => s.memberId === m3)?.ok).toBe(false);
      // A snapshot comes from a member that answers; the file holds every Secret: 0600.
      const file = join(lab.dir, 'snap', 'etcd.db');
      const snap = await admin.snapshot(file);
      expect(snap.endpoint).not.toBe(lab.member('m3').clientUrl);
      const st = statSync(file);
      expect(st.size).toBe(snap.bytes);
      expect(st.size).toBeGreaterThan(1000);
      expect(st.mode & 0o777).toBe(0o600);
    } finally {
      admin.close();
    }
  });
}, 60_000);
