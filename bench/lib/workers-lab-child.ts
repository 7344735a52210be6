/**
 * Child process of bench/workers (and bench/roll --pin): holds one lab in its own process, so that
 * the benchmark can pin it (`taskset -c 0`) apart from the orchestrator and the probes (the parent,
 * on the other core), as production has ferry on another machine than the cluster.
 *
 *   workers-lab-child.ts JSON   with JSON = { snapshotPath, dir, subnet, maxUnavailable?, clock?, clockSeed? }
 *
 * Starts the lab and writes the plan (prepareLabRun, as in-process runs do), serves the lab's
 * provisioner on DIR/lab-control.sock (serveLabControl), prints one JSON line (LabChildReady) and
 * holds the lab until stdin closes or SIGTERM; then disposes it and exits 0.
 */
import { join } from 'node:path';
import { serveLabControl } from '../../src/adapters/provisioners/lab-control.js';
import { prepareLabRun } from '../../src/app/rehearse.js';
import type { EtcdClientSettings } from '../../src/lab/cluster.js';
import type { LabClock } from '../../src/lab/provisioner/clock.js';
import type { MaxUnavailable } from '../../src/plan/batches/limits.js';

const SETTLE_TIMEOUT_MS = 300_000;

export interface LabChildArgs {
  snapshotPath: string;
  dir: string;
  subnet: number;
  maxUnavailable?: MaxUnavailable;
  /** How long the lab's machines take to boot and to power off; default: at once. */
  clock?: LabClock;
  /** Seeds each machine's jitter, so that two labs give a machine name the same times. */
  clockSeed?: string;
}

export interface LabChildReady {
  planFile: string;
  kubeconfigPath: string;
  etcd: EtcdClientSettings;
  canaryUrl: string | null;
  socket: string;
  pid: number;
  /** Every pod Ready before the roll starts (a roll timed from a lab still starting measures the start). */
  settled: { settled: boolean; pending: string[] };
}

async function main(): Promise<void> {
  const a = JSON.parse(process.argv[2] ?? '{}') as LabChildArgs;
  const setup = await prepareLabRun({
    snapshotPath: a.snapshotPath,
    dir: a.dir,
    subnet: a.subnet,
    log: (l) => process.stderr.write(`  lab-child: ${l}\n`),
    ...(a.maxUnavailable && { maxUnavailable: a.maxUnavailable }),
    lab: {
      ...(a.clock && { clock: a.clock }),
      ...(a.clockSeed !== undefined && { clockSeed: a.clockSeed }),
    },
  });
  // prepareLabRun waits 60 s; a lab of 60 workers on two shared cores may take longer.
  const settled = await setup.lab.waitSettled(SETTLE_TIMEOUT_MS);
  const socket = join(a.dir, 'lab-control.sock');
  const server = await serveLabControl(setup.control, socket);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await server.close();
      await setup.lab.dispose();
      process.exit(0);
    })();
    return stopping;
  };
  process.once('SIGTERM', () => void stop());
  process.stdin.on('end', () => void stop());
  process.stdin.on('close', () => void stop());
  process.stdin.resume();
  const ready: LabChildReady = {
    planFile: setup.planFile,
    kubeconfigPath: setup.lab.kubeconfigPath,
    etcd: setup.lab.etcdClientSettings(),
    canaryUrl: setup.lab.info().canary?.url ?? null,
    socket,
    pid: process.pid,
    settled: { settled: settled.settled, pending: settled.pending.slice(0, 5) },
  };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(4);
});
