/**
 * bench/leader-move: what one etcd leadership transfer costs a writer, by where the writer writes.
 * Raft drops proposals that reach the leader while it hands over (and the follower that forwarded
 * one is not told: the write waits for its deadline). The run moves leadership once per control
 * plane swap; this measures how often that single transfer catches a back-to-back writer:
 *   - follower: a member that is neither the leader nor the transferee;
 *   - transferee: the member leadership moves to;
 *   - leader: the member giving leadership away (its own proposals fail at once, and are retried;
 *     ferry's probe writes here).
 *
 *   npm run bench -- leader-move [--moves N] [--version 3.4|3.5] [--subnet N]
 */
import { parseArgs } from 'node:util';
import { EtcdAdmin, readTls } from '../src/adapters/etcd/admin.js';
import { EtcdWriteProbe } from '../src/adapters/probes/etcd.js';
import type { EtcdMinor } from '../src/lab/etcd/binaries.js';
import { disposeAllLabs, withEtcdLab } from '../src/lab/etcd/cluster.js';
import { type Bench, ms } from './lib/bench.js';

const sleep = (n: number) => new Promise((r) => setTimeout(r, n));
const TARGETS = ['follower', 'transferee', 'leader'] as const;

export const bench: Bench = {
  name: 'leader-move',
  summary: 'one etcd leadership transfer under back-to-back writes: dropped writes and gap, by writer target',
  async run(args: string[]): Promise<void> {
    const { values } = parseArgs({
      args,
      options: { moves: { type: 'string' }, version: { type: 'string' }, subnet: { type: 'string' } },
    });
    const moves = Math.max(1, Number(values.moves ?? 12));
    const version = (values.version ?? '3.5') as EtcdMinor;
    await withEtcdLab({ subnet: Number(values.subnet ?? 59), version, members: 3 }, async (lab) => {
      const tls = readTls(lab.clientTls());
      const admin = new EtcdAdmin({ endpoints: lab.endpoints(), tls });
      try {
        for (const target of TARGETS) {
          const gaps: number[] = [];
          let hung = 0;
          let fastFailures = 0;
          for (let i = 0; i < moves; i++) {
            const leader = await lab.waitForLeader();
            const [to, other] = lab.members().filter((m) => m.name !== leader);
            const writeTo = target === 'transferee' ? to! : target === 'leader' ? lab.member(leader) : other!;
            const probe = new EtcdWriteProbe({
              endpoints: [writeTo.clientUrl],
              tls,
              runId: `lm-${target}-${i}`,
              intervalMs: 0,
            });
            probe.start();
            await sleep(200);
            await admin.moveLeader(to!.id!);
            await sleep(200);
            const s = await probe.stop();
            gaps.push(s.longestGapMs);
            const timedOut = probe.samples().filter((x) => !x.ok && x.latencyMs >= 290).length;
            hung += timedOut > 0 ? 1 : 0;
            fastFailures += s.failures - timedOut;
          }
          gaps.sort((a, b) => a - b);
          console.log(
            `${target.padEnd(10)} etcd ${version}: ${hung}/${moves} transfers left a write hanging to its 300 ms deadline; ${fastFailures} writes refused at once; gap median ${ms(gaps[Math.floor(gaps.length / 2)]!)}, max ${ms(gaps.at(-1)!)}`,
          );
        }
      } finally {
        admin.close();
      }
    });
    await disposeAllLabs();
  },
};
