/**
 * A lab in its own process (workers-lab-child.ts), started under `taskset -c LAB_CORE` when
 * pinned; while it runs, this process (the orchestrator and the probes it starts) is on RUN_CORE,
 * and it gets its old affinity back when the lab stops.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { affinityOf, LAB_CORE, RUN_CORE, restoreAffinity, setAffinity } from './pin.js';
import type { LabChildArgs, LabChildReady } from './workers-lab-child.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..', '..');
// The child waits up to 60 s + 300 s for the lab to settle (rehearse.ts, workers-lab-child.ts); on
// one core a 12-worker lab took longer than 300 s in all.
const START_TIMEOUT_MS = 900_000;

export interface LabProcess {
  ready: LabChildReady;
  pinned: boolean;
  stop(): Promise<void>;
}

export async function startLabProcess(
  args: LabChildArgs,
  o: { pin: boolean; log: (l: string) => void },
): Promise<LabProcess> {
  const node = [
    process.execPath,
    '--import',
    'tsx',
    join(HERE, 'workers-lab-child.ts'),
    JSON.stringify(args),
  ];
  const [command, ...argv] = o.pin ? ['taskset', '-c', LAB_CORE, ...node] : node;
  const child = spawn(command!, argv, { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    const t = c.toString('utf8');
    stderr = (stderr + t).slice(-8_000);
    for (const l of t.split('\n')) if (l.trim()) o.log(l.trim());
  });
  const ready = await new Promise<LabChildReady>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`the lab process did not come up within ${START_TIMEOUT_MS / 1000} s:\n${stderr}`));
    }, START_TIMEOUT_MS);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.slice(0, nl)) as LabChildReady);
      } catch (err) {
        reject(new Error(`the lab process printed no readiness line: ${out.slice(0, 200)}`, { cause: err }));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the lab process exited (${code}) before it was ready:\n${stderr}`));
    });
  });
  const before = o.pin ? affinityOf(process.pid) : undefined;
  if (o.pin) setAffinity(process.pid, RUN_CORE);
  return {
    ready,
    pinned: o.pin,
    async stop() {
      if (before) restoreAffinity(process.pid, before);
      await stopChild(child);
    },
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.stdin!.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}
